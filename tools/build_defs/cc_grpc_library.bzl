"""C++ code generation for .proto files with the system protoc and grpc_cpp_plugin (offline, no rules_proto).

Usage, in a/b/BUILD.bazel:

    load("//tools/build_defs:cc_grpc_library.bzl", "cc_grpc_library")

    cc_grpc_library(
        name = "control_grpc",
        srcs = ["control.proto"],            # may `import "a/c/types.proto";`
        deps = ["//a/c:types_proto"],        # the cc_grpc_library that owns a/c/types.proto
    )

    cc_grpc_library(
        name = "types_proto",                # in a/c/BUILD.bazel: messages only, no services
        srcs = ["types.proto"],
        grpc = False,
    )

and in C++: `#include "a/b/control.grpc.pb.h"` (service and stub) or `#include "a/b/control.pb.h"` (messages).

Proto import paths are relative to the workspace root, as are the generated headers. Deps must be other
cc_grpc_library targets: their .proto files are made visible to protoc through the `<name>_protos` filegroup
each macro call also defines.
"""

_PROTOS_SUFFIX = "_protos"

def _protos_label(dep):
    """The `<name>_protos` filegroup of a cc_grpc_library label (":x", "x", "//a/b:x", "//a/b", "@r//a:x")."""
    if ":" in dep:
        return dep + _PROTOS_SUFFIX
    if dep.startswith("//") or dep.startswith("@"):
        return "%s:%s%s" % (dep, dep.rsplit("/", 1)[-1], _PROTOS_SUFFIX)
    return ":" + dep + _PROTOS_SUFFIX

def cc_grpc_library(name, srcs, deps = [], grpc = True, **kwargs):
    """Generates and compiles C++ for `srcs`: x.pb.{h,cc} and, when `grpc`, x.grpc.pb.{h,cc}.

    Args:
      name: the cc_library to define; `<name>_protos` and `<name>_codegen` are defined too.
      srcs: .proto files in this package.
      deps: cc_grpc_library targets whose .proto files `srcs` import.
      grpc: generate gRPC services and stubs (links @system//:grpc); False for messages only
        (links @system//:protobuf).
      **kwargs: passed to every target (visibility, testonly, tags, ...).
    """
    pkg = native.package_name()
    prefix = pkg + "/" if pkg else ""
    bases = []
    for src in srcs:
        if not src.endswith(".proto") or ":" in src:
            fail("cc_grpc_library %s: srcs must be .proto files of this package, got %r" % (name, src))
        bases.append(src[:-len(".proto")])

    # This package's protos and, transitively, every proto they may import.
    native.filegroup(
        name = name + _PROTOS_SUFFIX,
        srcs = srcs + [_protos_label(d) for d in deps],
        **kwargs
    )

    hdrs = [b + ".pb.h" for b in bases]
    cc_srcs = [b + ".pb.cc" for b in bases]
    if grpc:
        hdrs += [b + ".grpc.pb.h" for b in bases]
        cc_srcs += [b + ".grpc.pb.cc" for b in bases]

    # -I. (the execroot) makes import paths and generated paths workspace-relative: a/b/x.proto
    # becomes $(GENDIR)/a/b/x.pb.h, i.e. this package's output directory.
    cmd = "protoc -I. --cpp_out=$(GENDIR)"
    if grpc:
        cmd = ("PLUGIN=$$(command -v grpc_cpp_plugin) || " +
               "{ echo 'grpc_cpp_plugin not found: run tools/bootstrap.sh' >&2; exit 1; }; " +
               cmd + " --grpc_out=$(GENDIR) --plugin=protoc-gen-grpc=$$PLUGIN")
    native.genrule(
        name = name + "_codegen",
        srcs = [name + _PROTOS_SUFFIX],
        outs = hdrs + cc_srcs,
        cmd = cmd + " " + " ".join([prefix + s for s in srcs]),
        message = "Generating C++ for %s" % ", ".join(srcs),
        **kwargs
    )

    native.cc_library(
        name = name,
        srcs = cc_srcs,
        hdrs = hdrs,
        deps = deps + ["@system//:grpc" if grpc else "@system//:protobuf"],
        **kwargs
    )
