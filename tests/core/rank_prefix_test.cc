#include "core/data/rank_prefix.h"

#include <unistd.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "formats/error.h"

namespace sparktorch {
namespace {

// A pipe holding `input`, its writing end closed: what Spark's pipe gives a task.
class Pipe {
 public:
  explicit Pipe(const std::string& input) {
    EXPECT_EQ(::pipe(fds_), 0);
    EXPECT_EQ(::write(fds_[1], input.data(), input.size()), static_cast<ssize_t>(input.size()));
    ::close(fds_[1]);
  }
  ~Pipe() { ::close(fds_[0]); }
  int fd() const { return fds_[0]; }

  // Everything left in the pipe.
  std::string Rest() const {
    std::string rest;
    char buf[256];
    ssize_t n;
    while ((n = ::read(fds_[0], buf, sizeof buf)) > 0) rest.append(buf, static_cast<size_t>(n));
    return rest;
  }

 private:
  int fds_[2];
};

// The message of the InputError that reading `input` raises, or "no error".
std::string ErrorOf(const std::string& input, int world_size = 4) {
  Pipe pipe(input);
  try {
    ReadRankPrefix(pipe.fd(), world_size);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(RankPrefix, ReadsTheRankAndLeavesTheRowsInThePipe) {
  Pipe pipe("3\t1.0,[0.0,0.5]\n0.0,[1.0,1.5]\n");
  EXPECT_EQ(ReadRankPrefix(pipe.fd(), 4), std::optional<int>(3));
  EXPECT_EQ(pipe.Rest(), "1.0,[0.0,0.5]\n0.0,[1.0,1.5]\n");
}

TEST(RankPrefix, ManyDigitsAndLeadingZeros) {
  Pipe pipe("0012\tx\n");
  EXPECT_EQ(ReadRankPrefix(pipe.fd(), 100), std::optional<int>(12));
  EXPECT_EQ(pipe.Rest(), "x\n");
}

TEST(RankPrefix, TheGpusSparkGaveTheTaskComeAfterTheRank) {
  Pipe pipe("1 gpu=3,5\tx\n");
  std::vector<std::string> gpus;
  EXPECT_EQ(ReadRankPrefix(pipe.fd(), 2, "stdin", &gpus), std::optional<int>(1));
  EXPECT_EQ(gpus, (std::vector<std::string>{"3", "5"}));
  EXPECT_EQ(pipe.Rest(), "x\n");
  Pipe mig("0 gpu=MIG-4f2a/1.0\t");
  EXPECT_EQ(ReadRankPrefix(mig.fd(), 2, "stdin", &gpus), std::optional<int>(0));
  EXPECT_EQ(gpus, (std::vector<std::string>{"MIG-4f2a/1.0"}));
  EXPECT_EQ(ErrorOf("1 gpu=\tx\n", 2),
            "stdin: expected the rank (digits and a tab) before the first row "
            "(--rank-from-stdin), got \"1 gpu=\tx\"");
  EXPECT_EQ(ErrorOf("1 cpu=2\tx\n", 2),
            "stdin: expected the rank (digits and a tab) before the first row "
            "(--rank-from-stdin), got \"1 cpu=2\tx\"");
}

TEST(RankPrefix, EmptyInputHasNoRank) {
  Pipe pipe("");
  EXPECT_EQ(ReadRankPrefix(pipe.fd(), 4), std::nullopt);
}

TEST(RankPrefix, APrefixWithoutRowsIsARankWithNoRows) {
  Pipe pipe("1\t");
  EXPECT_EQ(ReadRankPrefix(pipe.fd(), 2), std::optional<int>(1));
  EXPECT_EQ(pipe.Rest(), "");
}

TEST(RankPrefix, RowsWithoutThePrefixAreAnInputError) {
  EXPECT_EQ(ErrorOf("3.0,[0.0,0.5,1.0,0.25,0.125,0.0625,0.5]\n"),
            "stdin: expected the rank (digits and a tab) before the first row "
            "(--rank-from-stdin), got \"3.0,[0.0,0.5,1.0,0.25,0.125,0.06...\"");
  EXPECT_EQ(ErrorOf("1,2,3\n4,5,6\n"),
            "stdin: expected the rank (digits and a tab) before the first row "
            "(--rank-from-stdin), got \"1,2,3\"");
  EXPECT_EQ(ErrorOf("1 [0.5]"),
            "stdin: expected the rank (digits and a tab) before the first row "
            "(--rank-from-stdin), got \"1 [0.5]\" and the end of the input");
  EXPECT_EQ(ErrorOf("\tx\n"),
            "stdin: expected the rank (digits and a tab) before the first row "
            "(--rank-from-stdin), got \"\tx\"");
  EXPECT_EQ(ErrorOf("\n1\t\n"),
            "stdin: expected the rank (digits and a tab) before the first row "
            "(--rank-from-stdin), got an empty line");
  EXPECT_EQ(ErrorOf("12"),
            "stdin: expected the rank (digits and a tab) before the first row "
            "(--rank-from-stdin), got \"12\" and the end of the input");
  EXPECT_EQ(ErrorOf("-1\tx\n"),
            "stdin: expected the rank (digits and a tab) before the first row "
            "(--rank-from-stdin), got \"-1\tx\"");
}

TEST(RankPrefix, MoreThanNineDigitsIsNotARank) {
  EXPECT_EQ(ErrorOf("1234567890\tx\n"),
            "stdin: expected the rank (digits and a tab) before the first row "
            "(--rank-from-stdin), got \"1234567890\tx\"");
}

TEST(RankPrefix, ARankOutsideTheWorldIsAnInputError) {
  EXPECT_EQ(ErrorOf("4\t1,2\n", 4),
            "stdin: expected a rank below --world-size 4 before the first row "
            "(--rank-from-stdin), got 4");
  EXPECT_EQ(ErrorOf("3\t1,2\n", 4), "no error");
}

}  // namespace
}  // namespace sparktorch
