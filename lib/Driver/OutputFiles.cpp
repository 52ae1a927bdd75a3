//===- OutputFiles.cpp - all-or-nothing output writing --------------------===//

#include "sluice/Driver/OutputFiles.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <vector>

using namespace llvm;

static Error fileError(const Twine &path, const Twine &what,
                       std::error_code code) {
  return createStringError(code, "cannot " + what + " '" + path +
                                     "': " + code.message());
}

Error mlir::sluice::writeOutputFiles(StringRef directory,
                                     ArrayRef<OutputFile> files) {
  bool createdDirectory = !sys::fs::exists(directory);
  if (std::error_code code = sys::fs::create_directories(directory))
    return fileError(directory, "create output directory", code);
  if (!sys::fs::is_directory(directory))
    return createStringError(inconvertibleErrorCode(),
                             "cannot write into '" + directory +
                                 "': it is not a directory");

  std::vector<std::string> temporaries;
  auto rollBack = [&] {
    for (const std::string &temporary : temporaries)
      sys::fs::remove(temporary);
    if (createdDirectory)
      sys::fs::remove(directory);
  };
  for (const OutputFile &file : files) {
    SmallString<256> model(directory);
    sys::path::append(model, "." + file.name + ".%%%%%%.tmp");
    int fd;
    SmallString<256> temporary;
    if (std::error_code code =
            sys::fs::createUniqueFile(model, fd, temporary)) {
      rollBack();
      SmallString<256> target(directory);
      sys::path::append(target, file.name);
      return fileError(target, "write", code);
    }
    temporaries.push_back(temporary.str().str());
    raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << file.contents;
    os.close();
    if (os.has_error()) {
      std::error_code code = os.error();
      os.clear_error();
      rollBack();
      return fileError(temporary, "write", code);
    }
  }
  for (auto [file, temporary] : llvm::zip(files, temporaries)) {
    SmallString<256> target(directory);
    sys::path::append(target, file.name);
    if (std::error_code code = sys::fs::rename(temporary, target)) {
      rollBack();
      return fileError(target, "write", code);
    }
  }
  return Error::success();
}
