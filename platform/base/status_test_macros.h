// gtest assertions on absl::Status and absl::StatusOr, for tests only.
//
//   ASSERT_OK(node->Start());
//   EXPECT_OK(store.Write(ref, payload));
//   ASSERT_OK_AND_ASSIGN(ObjectRef ref, store.Allocate(100));
#ifndef FATHOM_PLATFORM_BASE_STATUS_TEST_MACROS_H_
#define FATHOM_PLATFORM_BASE_STATUS_TEST_MACROS_H_

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "platform/base/status_macros.h"

#define ASSERT_OK(expr)                                        \
  do {                                                         \
    const ::absl::Status assert_ok_status_ = (expr);           \
    ASSERT_TRUE(assert_ok_status_.ok()) << assert_ok_status_;  \
  } while (0)
#define EXPECT_OK(expr)                                        \
  do {                                                         \
    const ::absl::Status expect_ok_status_ = (expr);           \
    EXPECT_TRUE(expect_ok_status_.ok()) << expect_ok_status_;  \
  } while (0)
#define ASSERT_OK_AND_ASSIGN(lhs, expr) \
  ASSERT_OK_AND_ASSIGN_IMPL_(FATHOM_CONCAT_(assert_ok_value_, __LINE__), lhs, expr)
#define ASSERT_OK_AND_ASSIGN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  ASSERT_TRUE(tmp.ok()) << tmp.status();           \
  lhs = std::move(tmp).value()

#endif  // FATHOM_PLATFORM_BASE_STATUS_TEST_MACROS_H_
