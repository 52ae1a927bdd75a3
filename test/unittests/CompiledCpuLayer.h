//===- CompiledCpuLayer.h - a spec compiled to a CPU module ---*- C++ -*-===//
//
// The fixture of the tests that run an emitted CPU module through the
// generic C ABI: compiles a JSON layer spec with the sluicec pipeline and
// builds its lib<name>_cpu.so in a temporary directory.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_TEST_UNITTESTS_COMPILEDCPULAYER_H
#define SLUICE_TEST_UNITTESTS_COMPILEDCPULAYER_H

#include "sluice/Codegen/LoadedModule.h"
#include "sluice/Driver/CompileModule.h"
#include "sluice/Pipeline/Pipeline.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

namespace mlir::sluice {

class CompiledCpuLayer : public ::testing::Test {
protected:
  /// Compiles `spec` (JSON text) into `library`, lib<name>_cpu.so in a new
  /// temporary directory (call with ASSERT_NO_FATAL_FAILURE).
  void compileSpec(llvm::StringRef spec, llvm::StringRef name) {
    DialectRegistry registry;
    registerSluiceDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("sluice-" + name, dir));
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, name + ".json");
    {
      std::error_code code;
      llvm::raw_fd_ostream os(path, code);
      ASSERT_FALSE(code) << code.message();
      os << spec;
    }
    FailureOr<Compilation> compiled = compile(context, path, PipelineOptions());
    ASSERT_TRUE(succeeded(compiled));
    compilation = std::move(*compiled);
    llvm::Expected<std::string> built =
        buildCpuLibrary(*compilation.module, name, dir);
    ASSERT_TRUE(!!built) << llvm::toString(built.takeError());
    library = *built;
  }
  void TearDown() override {
    if (!dir.empty())
      llvm::sys::fs::remove_directories(dir);
  }

  /// A LoadedModule of `library` with a context of its own.
  std::unique_ptr<LoadedModule> load() {
    llvm::Expected<std::unique_ptr<LoadedModule>> loaded =
        LoadedModule::load(library, ModuleKind::Cpu);
    EXPECT_TRUE(!!loaded) << llvm::toString(loaded.takeError());
    return loaded ? std::move(*loaded) : nullptr;
  }

  MLIRContext context;
  Compilation compilation;
  llvm::SmallString<128> dir;
  std::string library;
};

} // namespace mlir::sluice

#endif // SLUICE_TEST_UNITTESTS_COMPILEDCPULAYER_H
