//===- ReplayMain.cpp - run a fuzz harness over files, without libFuzzer --===//
//
// `sluice-fuzz-replay-<name> PATH...` calls the harness's
// LLVMFuzzerTestOneInput once per file (a directory: once per file in it,
// sorted), so `make test` replays the seed corpus and every past crash with
// the normal compiler and no libFuzzer. Prints how many inputs ran; a crash
// is the harness's abort or a sanitizer report.
//
//===----------------------------------------------------------------------===//

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/// Every regular file `path` names: itself, or the files of a directory.
static void collect(llvm::StringRef path, std::vector<std::string> &files) {
  if (!llvm::sys::fs::is_directory(path)) {
    files.push_back(path.str());
    return;
  }
  std::error_code code;
  for (llvm::sys::fs::directory_iterator it(path, code), end;
       it != end && !code; it.increment(code))
    if (llvm::sys::fs::is_regular_file(it->path()))
      files.push_back(it->path());
}

int main(int argc, char **argv) {
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i)
    collect(argv[i], files);
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    llvm::errs() << "replay: no input files\n";
    return 1;
  }
  for (const std::string &file : files) {
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
        llvm::MemoryBuffer::getFile(file, /*IsText=*/false,
                                    /*RequiresNullTerminator=*/false);
    if (!buffer) {
      llvm::errs() << "replay: cannot read " << file << ": "
                   << buffer.getError().message() << "\n";
      return 1;
    }
    llvm::StringRef bytes = (*buffer)->getBuffer();
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>(bytes.data()),
                           bytes.size());
  }
  llvm::outs() << "replay: " << files.size() << " inputs ran\n";
  return 0;
}
