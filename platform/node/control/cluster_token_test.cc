// Token format rules, constant-time equality, and what the server makes of the metadata it receives.
#include "platform/node/control/cluster_token.h"

#include <cstdlib>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace fathom::control {
namespace {

using Metadata = std::multimap<grpc::string_ref, grpc::string_ref>;

constexpr char kToken[] = "0123456789abcdef-token";

TEST(ClusterTokenTest, FormatRules) {
  EXPECT_TRUE(ValidateClusterToken(kToken).ok());
  EXPECT_TRUE(ValidateClusterToken(std::string(kMaxTokenBytes, 'a')).ok());
  EXPECT_EQ(ValidateClusterToken("").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidateClusterToken("short").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidateClusterToken(std::string(kMaxTokenBytes + 1, 'a')).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidateClusterToken("0123456789 abcdef").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidateClusterToken("0123456789abcdef\n").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidateClusterToken(std::string("0123456789abcdef\x80", 17)).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ClusterTokenTest, ErrorsNeverQuoteTheToken) {
  const std::string secret = "secret value with space";
  EXPECT_EQ(ValidateClusterToken(secret).message().find("secret"), absl::string_view::npos);
}

TEST(ClusterTokenTest, ConstantTimeEquals) {
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_TRUE(ConstantTimeEquals("", ""));
  EXPECT_FALSE(ConstantTimeEquals("abd", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("ab", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abcd", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", ""));
  // A prefix padded with the zero bytes the loop substitutes past its end must still differ.
  EXPECT_FALSE(ConstantTimeEquals(std::string("ab\0", 3), std::string("ab\0\0", 4)));
}

TEST(ClusterTokenTest, CheckPresentedToken) {
  const std::string key(kTokenMetadataKey);
  const std::string right = kToken;
  const std::string wrong = "0123456789abcdef-tokeN";
  const std::string other_key = "x-other";

  Metadata none;
  EXPECT_EQ(CheckPresentedToken(none, kToken).code(), absl::StatusCode::kPermissionDenied);

  Metadata good{{key, right}, {other_key, wrong}};
  EXPECT_TRUE(CheckPresentedToken(good, kToken).ok());

  Metadata bad{{key, wrong}};
  absl::Status status = CheckPresentedToken(bad, kToken);
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(status.message().find(wrong), absl::string_view::npos) << "must not echo the token";

  Metadata twice{{key, right}, {key, right}};
  EXPECT_EQ(CheckPresentedToken(twice, kToken).code(), absl::StatusCode::kPermissionDenied);

  Metadata only_other{{other_key, right}};
  EXPECT_EQ(CheckPresentedToken(only_other, kToken).code(), absl::StatusCode::kPermissionDenied);
}

TEST(ClusterTokenTest, TokenFromFlags) {
  EXPECT_EQ(*TokenFromFlags("inline-token-0123456789", "", "missing"), "inline-token-0123456789");
  absl::StatusOr<std::string> none = TokenFromFlags("", "", "the tool needs a token");
  EXPECT_TRUE(absl::IsInvalidArgument(none.status()));
  EXPECT_EQ(none.status().message(), "the tool needs a token");
  EXPECT_TRUE(absl::IsInvalidArgument(TokenFromFlags("a", "/b", "m").status()));
  EXPECT_TRUE(absl::IsNotFound(TokenFromFlags("", "/nonexistent/token", "m").status()));
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(tmp != nullptr ? tmp : "/tmp") + "/token_from_flags";
  std::ofstream(path) << "file-token-0123456789\nsecond line\n";
  EXPECT_EQ(*TokenFromFlags("", path, "m"), "file-token-0123456789");  // the first line only
}

}  // namespace
}  // namespace fathom::control
