"""cluster_sh_test: a shell test of tools/cluster.sh against a real cluster (cluster_test_lib.sh)."""

def cluster_sh_test(name):
    """`name`.sh, given cluster.sh, fathomd and fathomctl; real processes and a ZooKeeper server on loopback
    ports, so exclusive: the test does not share the cores with others."""
    native.sh_test(
        name = name,
        size = "large",
        srcs = [name + ".sh"],
        args = [
            "$(location :cluster.sh)",
            "$(location //server:fathomd)",
            "$(location //tools/fathomctl:fathomctl)",
        ],
        data = [
            "cluster.sh",
            "cluster_test_lib.sh",
            "//server:fathomd",
            "//tools/fathomctl:fathomctl",
        ],
        tags = ["exclusive"],
    )
