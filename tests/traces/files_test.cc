// Input files refused by type and size before reading; output files replaced whole or not at
// all (a full device, a file-size limit), devices written through, links followed; echoes
// escaped.
#include "traces/files.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

namespace autotune {
namespace {

class FilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("autotune_files_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  static std::string Read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), {});
  }
  std::set<std::string> Names() const {
    std::set<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir_)) {
      names.insert(e.path().filename().string());
    }
    return names;
  }
  // A character device node in the test's own folder (root only): "" when it cannot be made.
  std::string Device(const std::string& name, unsigned major_number, unsigned minor_number) {
    const std::string path = Path(name);
    return mknod(path.c_str(), S_IFCHR | 0666, makedev(major_number, minor_number)) == 0 ? path
                                                                                         : "";
  }

  std::filesystem::path dir_;
};

TEST_F(FilesTest, ReadsARegularFileWhole) {
  { std::ofstream(Path("a.txt")) << "hello\n"; }
  std::string text;
  ASSERT_TRUE(ReadInputFile(Path("a.txt"), "thing", 100, &text).ok());
  EXPECT_EQ(text, "hello\n");
}

TEST_F(FilesTest, RefusesAFolderADeviceAndALargeFileBeforeReading) {
  std::string text = "kept";
  Status s = ReadInputFile(dir_.string(), "timeline", 100, &text);
  EXPECT_EQ(s.message(),
            "cannot read timeline " + dir_.string() + ": it is a directory, not a file");
  { std::ofstream(Path("big")) << std::string(101, 'x'); }
  s = ReadInputFile(Path("big"), "config file", 100, &text);
  EXPECT_EQ(s.message(),
            "cannot read config file " + Path("big") + ": larger than the limit of 100 bytes");
  s = ReadInputFile(Path("none"), "config file", 100, &text);
  EXPECT_NE(s.message().find("No such file or directory"), std::string::npos) << s.message();
  EXPECT_EQ(text, "kept");
  const std::string zero = Device("zero", 1, 5);
  if (zero.empty()) GTEST_SKIP() << "mknod needs root";
  s = ReadInputFile(zero, "config file", 100, &text);
  EXPECT_EQ(s.message(),
            "cannot read config file " + zero + ": it is a character device, not a file");
}

TEST_F(FilesTest, ReplacesARegularFileWholeKeepingItsMode) {
  { std::ofstream(Path("out.yaml")) << "old"; }
  chmod(Path("out.yaml").c_str(), 0640);
  ASSERT_TRUE(WriteOutputFile(Path("out.yaml"), "new contents").ok());
  EXPECT_EQ(Read(Path("out.yaml")), "new contents");
  struct stat st;
  ASSERT_EQ(stat(Path("out.yaml").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  EXPECT_EQ(Names(), std::set<std::string>{"out.yaml"});
}

TEST_F(FilesTest, FollowsALinkAndReplacesItsTarget) {
  { std::ofstream(Path("target")) << "old"; }
  ASSERT_EQ(symlink(Path("target").c_str(), Path("link").c_str()), 0);
  ASSERT_TRUE(WriteOutputFile(Path("link"), "through the link").ok());
  EXPECT_TRUE(std::filesystem::is_symlink(Path("link")));
  EXPECT_EQ(Read(Path("target")), "through the link");
}

TEST_F(FilesTest, RefusesAFolder) {
  std::filesystem::create_directories(Path("sub"));
  EXPECT_EQ(WriteOutputFile(Path("sub"), "x").message(),
            "cannot write " + Path("sub") + ": it is a directory, not a file");
}

TEST_F(FilesTest, FileSizeLimitLeavesTheOldFileAndNoTemporary) {
  { std::ofstream(Path("out.json")) << "old"; }
  std::signal(SIGXFSZ, SIG_IGN);  // as main() does: the write fails with EFBIG instead
  rlimit saved;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  rlimit limited = saved;
  limited.rlim_cur = 4096;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limited), 0);
  const Status s = WriteOutputFile(Path("out.json"), std::string(100000, 'x'));
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &saved), 0);
  std::signal(SIGXFSZ, SIG_DFL);
  EXPECT_EQ(s.message(),
            "cannot write " + Path("out.json") + ": file too large (a file-size limit)");
  EXPECT_EQ(Read(Path("out.json")), "old");
  EXPECT_EQ(Names(), std::set<std::string>{"out.json"});
}

TEST_F(FilesTest, DeviceIsWrittenThroughAndAFullOneIsAnError) {
  const std::string full = Device("full", 1, 7), null = Device("null", 1, 3);
  if (full.empty() || null.empty()) GTEST_SKIP() << "mknod needs root";
  EXPECT_TRUE(WriteOutputFile(null, "discarded").ok());
  EXPECT_EQ(WriteOutputFile(full, "x").message(),
            "cannot write " + full + ": no space left on the device (disk full)");
  struct stat st;
  ASSERT_EQ(stat(full.c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << "the device node was replaced";
  EXPECT_EQ(Names(), (std::set<std::string>{"full", "null"}));
}

TEST_F(FilesTest, FifoIsWrittenThrough) {
  ASSERT_EQ(mkfifo(Path("fifo").c_str(), 0600), 0);
  std::string got;
  std::thread reader([&] { got = Read(Path("fifo")); });
  EXPECT_TRUE(WriteOutputFile(Path("fifo"), "through the pipe").ok());
  reader.join();
  EXPECT_EQ(got, "through the pipe");
  EXPECT_EQ(std::filesystem::status(Path("fifo")).type(), std::filesystem::file_type::fifo);
}

TEST(EscapeForTerminalTest, EscapesControlBytesAndInvalidUtf8Only) {
  EXPECT_EQ(EscapeForTerminal("plain text"), "plain text");
  EXPECT_EQ(EscapeForTerminal("a\nb\x1b[31m"), "a\\x0ab\\x1b[31m");
  EXPECT_EQ(EscapeForTerminal("caf\xc3\xa9 \xe2\x9c\x93"),
            "caf\xc3\xa9 \xe2\x9c\x93");  // UTF-8 kept
  EXPECT_EQ(EscapeForTerminal("bad\xff\xfe"), "bad\\xff\\xfe");
  EXPECT_EQ(EscapeForTerminal("cut\xc3"), "cut\\xc3");              // a sequence cut short
  EXPECT_EQ(EscapeForTerminal("\xc0\xaf"), "\\xc0\\xaf");           // overlong '/'
  EXPECT_EQ(EscapeForTerminal("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
  EXPECT_EQ(EscapeForTerminal("\xc2\x85"), "\\xc2\\x85");           // C1 control NEL
}

}  // namespace
}  // namespace autotune
