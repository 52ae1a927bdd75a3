//===- CommandLine.cpp - tool options without LLVM's internal ones --------===//

#include "sluice/Support/CommandLine.h"

#include "llvm/ADT/DenseMap.h"

namespace cl = llvm::cl;

void mlir::sluice::hideUnrelatedOptions(
    llvm::ArrayRef<const cl::OptionCategory *> categories,
    cl::SubCommand &sub) {
  // LLVM decides which options are unrelated (it knows the generic
  // category); only the kind of hiding differs.
  auto &options = cl::getRegisteredOptions(sub);
  llvm::DenseMap<cl::Option *, cl::OptionHidden> before;
  for (auto &entry : options)
    before[entry.second] = entry.second->getOptionHiddenFlag();
  cl::HideUnrelatedOptions(categories, sub);
  for (auto [option, flag] : before)
    if (flag != cl::ReallyHidden &&
        option->getOptionHiddenFlag() == cl::ReallyHidden)
      option->setHiddenFlag(cl::Hidden);
}
