// FileStorage keeps its own copy of the path: name() and the errors that cite it stay valid
// after the caller's string is gone (the tests open files with temporaries everywhere; ASan
// found Session::open formatting a budget error from a freed path).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ports/posix/file_storage.h"
#include "test_support.h"

namespace pocketlm {
namespace {

TEST(FileStorage, NameOutlivesTheCallersPathString) {
  const std::string path = test::temp_dir() + "/eight-bytes.bin";
  test::write_file(path, std::vector<unsigned char>(8, 0));
  FileStorage f;
  {
    std::string caller = path;
    ASSERT_TRUE(f.open(caller.c_str(), "model").ok());
    caller.assign(caller.size(), 'X');  // a borrowed pointer would now read the X's (or freed memory)
  }
  EXPECT_EQ(std::string(f.name()), path);
  unsigned char buf[16];
  const Status st = f.read(0, buf, sizeof buf);  // past the end: the error names the file
  ASSERT_FALSE(st.ok());
  EXPECT_NE(std::string(st.message()).find(path), std::string::npos) << st.message();
}

}  // namespace
}  // namespace pocketlm
