#include "bench/ycsb/properties.h"

#include <cstdio>
#include <fstream>

#include "gtest/gtest.h"

namespace fathom::ycsb {
namespace {

TEST(PropertiesTest, ParsesYcsbWorkloadSyntax) {
  Properties props;
  ASSERT_TRUE(props
                  .ParseText("# comment\n"
                             "! also a comment\n"
                             "\n"
                             "recordcount=1000\n"
                             "  operationcount = 2000  \n"
                             "workload=site.ycsb.workloads.CoreWorkload\n"
                             "colon:value\n"
                             "spaced value with spaces\n"
                             "empty=\n"
                             "bare\n"
                             "recordcount=3000\n")
                  .ok());
  EXPECT_EQ(props.GetString("recordcount", ""), "3000");  // later lines win
  EXPECT_EQ(props.GetString("operationcount", ""), "2000");
  EXPECT_EQ(props.GetString("workload", ""), "site.ycsb.workloads.CoreWorkload");
  EXPECT_EQ(props.GetString("colon", ""), "value");
  EXPECT_EQ(props.GetString("spaced", ""), "value with spaces");
  EXPECT_TRUE(props.Has("empty"));
  EXPECT_EQ(props.GetString("empty", "x"), "");
  EXPECT_TRUE(props.Has("bare"));
  EXPECT_FALSE(props.Has("comment"));
  EXPECT_EQ(props.values().size(), 7u);
}

TEST(PropertiesTest, AssignmentsOverrideFileValues) {
  Properties props;
  ASSERT_TRUE(props.ParseText("recordcount=1000\n").ok());
  ASSERT_TRUE(props.SetFromAssignment("recordcount=5000").ok());
  ASSERT_TRUE(props.SetFromAssignment(" fieldlength = 8 ").ok());
  ASSERT_TRUE(props.SetFromAssignment("table=a=b").ok());  // only the first '=' splits
  EXPECT_EQ(*props.GetInt("recordcount", 0), 5000);
  EXPECT_EQ(*props.GetInt("fieldlength", 0), 8);
  EXPECT_EQ(props.GetString("table", ""), "a=b");
  EXPECT_FALSE(props.SetFromAssignment("novalue").ok());
  EXPECT_FALSE(props.SetFromAssignment("=5").ok());
}

TEST(PropertiesTest, TypedGettersUseDefaultsAndRejectGarbage) {
  Properties props;
  ASSERT_TRUE(props.ParseText("i=42\nd=0.25\nb=TRUE\nbad_i=4x\nbad_d=zero\nbad_b=yes\n").ok());
  EXPECT_EQ(*props.GetInt("i", 0), 42);
  EXPECT_EQ(*props.GetInt("missing", 7), 7);
  EXPECT_DOUBLE_EQ(*props.GetDouble("d", 0), 0.25);
  EXPECT_DOUBLE_EQ(*props.GetDouble("missing", 1.5), 1.5);
  EXPECT_TRUE(*props.GetBool("b", false));
  EXPECT_FALSE(*props.GetBool("missing", false));
  EXPECT_FALSE(props.GetInt("bad_i", 0).ok());
  EXPECT_FALSE(props.GetDouble("bad_d", 0).ok());
  EXPECT_FALSE(props.GetBool("bad_b", false).ok());
}

TEST(PropertiesTest, LoadsFilesAndReportsMissingOnes) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp") +
                           "/properties_test_workload";
  {
    std::ofstream out(path);
    out << "readproportion=0.5\nupdateproportion=0.5\n";
  }
  Properties props;
  ASSERT_TRUE(props.LoadFile(path).ok());
  EXPECT_DOUBLE_EQ(*props.GetDouble("readproportion", 0), 0.5);
  std::remove(path.c_str());
  EXPECT_EQ(props.LoadFile(path).code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace fathom::ycsb
