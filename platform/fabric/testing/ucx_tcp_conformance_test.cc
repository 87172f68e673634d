// The Fabric conformance suite on UcxFabric over tcp on loopback between two processes.
#include "platform/fabric/testing/ucx_env.h"

namespace fathom::fabric::testing {
std::unique_ptr<ConformanceEnv> MakeConformanceEnv() { return std::make_unique<UcxPeerEnv>("tcp"); }
}  // namespace fathom::fabric::testing
