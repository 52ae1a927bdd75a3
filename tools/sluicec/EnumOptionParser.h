//===- EnumOptionParser.h - enum options that list their values -*- C++ -*-===//
//
// llvm::cl's enum parser rejects an unknown value with "Cannot find option
// named 'x'!"; sluicec's enum options say which values they take instead.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_TOOLS_SLUICEC_ENUMOPTIONPARSER_H
#define SLUICE_TOOLS_SLUICEC_ENUMOPTIONPARSER_H

#include "llvm/Support/CommandLine.h"

#include <string>

namespace mlir::sluice {

/// The parser of a `cl::values` enum option whose error lists the allowed
/// values: "for the --mask-policy option: 'sometimes' is not one of auto,
/// regenerate, bitpack".
template <typename T>
class EnumOptionParser : public llvm::cl::parser<T> {
public:
  using llvm::cl::parser<T>::parser;

  /// Returns true (after reporting the error) for a value not listed.
  bool parse(llvm::cl::Option &option, llvm::StringRef argName,
             llvm::StringRef arg, T &value) {
    llvm::StringRef name = this->Owner.hasArgStr() ? arg : argName;
    std::string allowed;
    for (const auto &[index, info] : llvm::enumerate(this->Values)) {
      if (info.Name == name) {
        value = info.V.getValue();
        return false;
      }
      allowed += (index ? ", " : "") + info.Name.str();
    }
    return option.error("'" + name + "' is not one of " + allowed);
  }
};

} // namespace mlir::sluice

#endif // SLUICE_TOOLS_SLUICEC_ENUMOPTIONPARSER_H
