//===- InputLimits.cpp - bounded reading of user input files --------------===//

#include "sluice/Support/InputLimits.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/FileSystem.h"

using namespace mlir::sluice;
using llvm::StringRef;
namespace fs = llvm::sys::fs;

static llvm::Error inputError(StringRef path, const llvm::Twine &message,
                              std::error_code code = {}) {
  if (!code)
    code = llvm::inconvertibleErrorCode();
  return llvm::createStringError(code, path + ": " + message);
}

/// "a FIFO", "a directory", ... for a file that is not regular.
static StringRef describeFileType(fs::file_type type) {
  switch (type) {
  case fs::file_type::directory_file:
    return "a directory";
  case fs::file_type::fifo_file:
    return "a FIFO";
  case fs::file_type::character_file:
    return "a character device";
  case fs::file_type::block_file:
    return "a block device";
  case fs::file_type::socket_file:
    return "a socket";
  default:
    return "not a regular file";
  }
}

/// Bytes in a readable unit: "1 MiB" for exact powers, else the count.
static std::string formatBytes(uint64_t bytes) {
  if (bytes >= (uint64_t(1) << 30) && bytes % (uint64_t(1) << 30) == 0)
    return std::to_string(bytes >> 30) + " GiB";
  if (bytes >= (uint64_t(1) << 20) && bytes % (uint64_t(1) << 20) == 0)
    return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes) + " bytes";
}

llvm::Error mlir::sluice::checkRegularFile(StringRef path) {
  if (path.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cannot read the file: the path is empty");
  fs::file_status status;
  if (std::error_code code = fs::status(path, status))
    return inputError(path, "cannot read the file: " + code.message(), code);
  if (status.type() != fs::file_type::regular_file)
    return inputError(path, "cannot read the file: it is " +
                                describeFileType(status.type()) +
                                ", not a regular file");
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
mlir::sluice::readBoundedFile(StringRef path, uint64_t limit, StringRef what) {
  // Stat before opening: opening a FIFO blocks until a writer appears.
  if (llvm::Error error = checkRegularFile(path))
    return std::move(error);
  fs::file_status status;
  if (std::error_code code = fs::status(path, status))
    return inputError(path, "cannot read the file: " + code.message(), code);
  if (status.getSize() > limit)
    return inputError(path, "the file has " + llvm::Twine(status.getSize()) +
                                " bytes; " + what + " may have at most " +
                                formatBytes(limit));
  // NUL-terminated: the MLIR lexer reads up to the terminator (the IR
  // fuzzer found an overread on an unterminated buffer).
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/true);
  if (std::error_code code = buffer.getError())
    return inputError(path, "cannot read the file: " + code.message(), code);
  // The file may have grown between the stat and the read.
  if ((*buffer)->getBufferSize() > limit)
    return inputError(path, "the file has more than " + formatBytes(limit) +
                                "; " + what + " may have at most " +
                                formatBytes(limit));
  return std::move(*buffer);
}

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
mlir::sluice::readBoundedStdin(uint64_t limit, StringRef what) {
  constexpr StringRef name = "<stdin>";
  llvm::SmallVector<char, 0> text;
  char chunk[1 << 16];
  while (true) {
    llvm::Expected<size_t> read = fs::readNativeFile(
        fs::getStdinHandle(), llvm::MutableArrayRef<char>(chunk));
    if (!read)
      return inputError(name, "cannot read standard input: " +
                                  llvm::toString(read.takeError()));
    if (*read == 0)
      break;
    text.append(chunk, chunk + *read);
    if (text.size() > limit)
      return inputError(name, "standard input has more than " +
                                  formatBytes(limit) + "; " + what +
                                  " may have at most " + formatBytes(limit));
  }
  return llvm::MemoryBuffer::getMemBufferCopy(
      StringRef(text.data(), text.size()), name);
}

std::optional<size_t> mlir::sluice::findExcessiveNesting(StringRef text,
                                                         unsigned limit,
                                                         bool lineComments) {
  unsigned depth = 0;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    if (c == '"') {
      // Skip the string; an unterminated one ends the scan.
      for (++i; i < e && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      continue;
    }
    if (lineComments && c == '/' && i + 1 < e && text[i + 1] == '/') {
      while (i < e && text[i] != '\n')
        ++i;
      continue;
    }
    if (c == '(' || c == '[' || c == '{') {
      if (++depth > limit)
        return i;
    } else if ((c == ')' || c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::nullopt;
}

std::pair<unsigned, unsigned> mlir::sluice::getLineAndColumn(StringRef text,
                                                             size_t offset) {
  offset = std::min(offset, text.size());
  StringRef before = text.take_front(offset);
  unsigned line = 1 + before.count('\n');
  size_t lastNewline = before.rfind('\n');
  unsigned column =
      lastNewline == StringRef::npos ? offset + 1 : offset - lastNewline;
  return {line, column};
}
