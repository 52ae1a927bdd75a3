//===- SluiceTestFixture.h - the context every unit test starts from -*- C++ -*-===//

#ifndef SLUICE_TEST_UNITTESTS_SLUICETESTFIXTURE_H
#define SLUICE_TEST_UNITTESTS_SLUICETESTFIXTURE_H

#include "sluice/Pipeline/Pipeline.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

namespace mlir::sluice {

/// A fixture whose context holds every dialect a sluice module may use.
class SluiceTest : public ::testing::Test {
protected:
  SluiceTest() {
    DialectRegistry registry;
    registerSluiceDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// Parses a module from IR text (null, with a diagnostic, on error).
  OwningOpRef<ModuleOp> parse(llvm::StringRef text) {
    return parseSourceString<ModuleOp>(text, &context);
  }

  MLIRContext context;
};

} // namespace mlir::sluice

#endif // SLUICE_TEST_UNITTESTS_SLUICETESTFIXTURE_H
