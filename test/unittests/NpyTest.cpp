//===- NpyTest.cpp - .npy reading and writing -----------------------------===//

#include "sluice/Support/Npy.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace mlir::sluice;

namespace {

/// The bytes of a .npy file with the given header fields and payload.
std::string makeNpy(const std::string &descr, const std::string &order,
                    const std::string &shape, const std::string &payload,
                    int major = 1) {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': " + order +
                       ", 'shape': " + shape + ", }\n";
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  int lengthBytes = major == 1 ? 2 : 4;
  for (int i = 0; i < lengthBytes; ++i)
    out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header + payload;
}

std::string f32Bytes(std::initializer_list<float> values) {
  std::string out;
  for (float v : values)
    out.append(reinterpret_cast<const char *>(&v), 4);
  return out;
}

/// The error message of `expected`, which must have failed.
template <typename T>
std::string errorOf(llvm::Expected<T> expected) {
  if (expected)
    return "<no error>";
  return llvm::toString(expected.takeError());
}

class NpyFiles : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("sluice-npy-test", dir));
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir); }
  std::string path(llvm::StringRef name) {
    llvm::SmallString<256> p(dir);
    llvm::sys::path::append(p, name);
    return std::string(p);
  }
  void writeBytes(llvm::StringRef name, llvm::StringRef bytes) {
    std::error_code ec;
    llvm::raw_fd_ostream os(path(name), ec);
    ASSERT_FALSE(ec);
    os << bytes;
  }
  llvm::SmallString<256> dir;
};

} // namespace

TEST_F(NpyFiles, RoundTripF64) {
  std::vector<double> data = {1.0, -2.5, M_PI, 1e-300, INFINITY, 0.1};
  ASSERT_FALSE(
      llvm::errorToBool(writeNpy(path("a.npy"), {2, 3}, data, NpyDType::F64)));
  llvm::Expected<NpyArray> array = readNpy(path("a.npy"));
  ASSERT_TRUE(bool(array)) << llvm::toString(array.takeError());
  EXPECT_EQ(array->dtype, NpyDType::F64);
  EXPECT_EQ(array->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(array->data, data);
  // No temporary file is left behind.
  std::error_code ec;
  int entries = 0;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec))
    ++entries;
  EXPECT_EQ(entries, 1);
}

TEST_F(NpyFiles, RoundTripF32RoundsToFloat) {
  std::vector<double> data = {1.0, 0.1, -3.0};
  ASSERT_FALSE(
      llvm::errorToBool(writeNpy(path("b.npy"), {3}, data, NpyDType::F32)));
  llvm::Expected<NpyArray> array = readNpy(path("b.npy"));
  ASSERT_TRUE(bool(array)) << llvm::toString(array.takeError());
  EXPECT_EQ(array->dtype, NpyDType::F32);
  EXPECT_EQ(array->shape, (std::vector<int64_t>{3}));
  EXPECT_EQ(array->data,
            (std::vector<double>{1.0, static_cast<double>(0.1f), -3.0}));
}

TEST(Npy, HeaderTextIsNumpyCompatible) {
  llvm::Expected<std::string> scalar = serializeNpy({}, {7.0}, NpyDType::F64);
  ASSERT_TRUE(bool(scalar));
  EXPECT_NE(scalar->find("'shape': (), }"), std::string::npos);
  llvm::Expected<std::string> vector =
      serializeNpy({2}, {1.0, 2.0}, NpyDType::F32);
  ASSERT_TRUE(bool(vector));
  EXPECT_NE(vector->find("{'descr': '<f4', 'fortran_order': False, "
                         "'shape': (2,), }"),
            std::string::npos);
  EXPECT_EQ((vector->size() - 8) % 64, 0u) << "data starts 64-aligned";
  EXPECT_EQ(vector->substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  llvm::Expected<std::string> matrix =
      serializeNpy({1, 2, 1}, {1.0, 2.0}, NpyDType::F64);
  ASSERT_TRUE(bool(matrix));
  EXPECT_NE(matrix->find("'shape': (1, 2, 1), }"), std::string::npos);
  llvm::Expected<NpyArray> back = parseNpy(*scalar, "scalar");
  ASSERT_TRUE(bool(back));
  EXPECT_TRUE(back->shape.empty());
  EXPECT_EQ(back->data, std::vector<double>{7.0});
}

TEST(Npy, ReadsF16) {
  std::string payload;
  for (uint16_t bits : {0x3C00, 0xC000, 0x0001, 0x7C00, 0x7BFF, 0x3555}) {
    payload += static_cast<char>(bits & 0xff);
    payload += static_cast<char>(bits >> 8);
  }
  llvm::Expected<NpyArray> array =
      parseNpy(makeNpy("<f2", "False", "(2, 3)", payload), "h.npy");
  ASSERT_TRUE(bool(array)) << llvm::toString(array.takeError());
  EXPECT_EQ(array->dtype, NpyDType::F16);
  EXPECT_EQ(array->data,
            (std::vector<double>{1.0, -2.0, std::ldexp(1.0, -24), INFINITY,
                                 65504.0, 0.333251953125}));
}

TEST(Npy, ReadsVersions2And3) {
  for (int major : {2, 3}) {
    llvm::Expected<NpyArray> array = parseNpy(
        makeNpy("<f4", "False", "(2,)", f32Bytes({1.5f, -2.0f}), major), "v");
    ASSERT_TRUE(bool(array)) << llvm::toString(array.takeError());
    EXPECT_EQ(array->data, (std::vector<double>{1.5, -2.0}));
  }
}

TEST(Npy, ErrorsNameTheFileAndTheProblem) {
  std::string good = makeNpy("<f4", "False", "(2,)", f32Bytes({1, 2}));
  EXPECT_TRUE(bool(parseNpy(good, "f.npy")));

  std::string badMagic = good;
  badMagic[1] = 'X';
  EXPECT_EQ(errorOf(parseNpy(badMagic, "f.npy")),
            "f.npy: not a .npy file (bad magic string; expected "
            "\"\\x93NUMPY\")");
  EXPECT_EQ(errorOf(parseNpy(makeNpy(">f4", "False", "(2,)", f32Bytes({1, 2})),
                             "f.npy")),
            "f.npy: big-endian dtype '>f4' is not supported (use '<f2', "
            "'<f4' or '<f8')");
  EXPECT_EQ(errorOf(parseNpy(makeNpy("<i4", "False", "(2,)", f32Bytes({1, 2})),
                             "f.npy")),
            "f.npy: unsupported dtype '<i4' (supported: '<f2', '<f4', '<f8')");
  EXPECT_EQ(errorOf(parseNpy(makeNpy("<f4", "True", "(2,)", f32Bytes({1, 2})),
                             "f.npy")),
            "f.npy: fortran_order True is not supported (save a "
            "C-contiguous array)");
  EXPECT_EQ(errorOf(parseNpy(makeNpy("<f4", "False", "(3,)", f32Bytes({1, 2})),
                             "f.npy")),
            "f.npy: truncated data: the shape needs 12 bytes but 8 follow the "
            "header");
  EXPECT_EQ(errorOf(parseNpy(makeNpy("<f4", "False", "(1,)", f32Bytes({1, 2})),
                             "f.npy")),
            "f.npy: 4 unexpected bytes after the data");
  std::string badVersion = good;
  badVersion[6] = 4;
  EXPECT_EQ(errorOf(parseNpy(badVersion, "f.npy")),
            "f.npy: unsupported .npy format version 4.0 (supported: 1.0, 2.0, "
            "3.0)");
  EXPECT_EQ(errorOf(parseNpy(good.substr(0, 20), "f.npy")),
            "f.npy: truncated .npy header (it claims " +
                std::to_string(good.size() - 10 - 8) + " bytes)");
  EXPECT_EQ(errorOf(parseNpy(std::string("\x93NUMPY\x01", 7), "f.npy")),
            "f.npy: truncated .npy header");
  std::string malformed = errorOf(
      parseNpy(makeNpy("<f4", "False", "[2]", f32Bytes({1, 2})), "f.npy"));
  EXPECT_EQ(malformed.rfind("f.npy: malformed .npy header ('shape' must be a "
                            "tuple)",
                            0),
            0u)
      << malformed;
  std::string unknownKey = errorOf(
      parseNpy(makeNpy("<f4', 'extra': 'x", "False", "(2,)", f32Bytes({1, 2})),
               "f.npy"));
  EXPECT_NE(unknownKey.find("unknown key 'extra'"), std::string::npos)
      << unknownKey;
}

TEST_F(NpyFiles, FileErrors) {
  std::string missing = errorOf(readNpy(path("missing.npy")));
  EXPECT_EQ(missing.rfind(path("missing.npy") + ": cannot read the file: ", 0), 0u)
      << missing;
  writeBytes("bad.npy", "hello");
  std::string bad = errorOf(readNpy(path("bad.npy")));
  EXPECT_EQ(bad.rfind(path("bad.npy") + ": not a .npy file", 0), 0u) << bad;

  std::string noDir = path("nodir/x.npy");
  llvm::Error error = writeNpy(noDir, {1}, {1.0}, NpyDType::F32);
  ASSERT_TRUE(bool(error));
  std::string message = llvm::toString(std::move(error));
  EXPECT_EQ(message.rfind(noDir + ": cannot create a temporary file", 0), 0u)
      << message;

  error = writeNpy(path("y.npy"), {2, 2}, {1.0}, NpyDType::F32);
  EXPECT_EQ(llvm::toString(std::move(error)),
            path("y.npy") +
                ": the .npy shape holds 4 elements but 1 were given");
  error = writeNpy(path("z.npy"), {1}, {1.0}, NpyDType::F16);
  EXPECT_EQ(llvm::toString(std::move(error)),
            path("z.npy") + ": writing f16 .npy files is not supported (write "
                            "'<f4' or '<f8')");
  EXPECT_FALSE(llvm::sys::fs::exists(path("y.npy")));
}
