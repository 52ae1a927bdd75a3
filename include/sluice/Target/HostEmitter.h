//===- HostEmitter.h - printing sluice_exec ops as C++ ----------*- C++ -*-===//
//
// The state both printers (lib/Target/Cuda, lib/Target/Cpp) write into while
// they print sluice_exec ops: the statements of the entry point being
// printed and the module sections those statements need (fields of the
// context struct, code in create and destroy). Every section is a
// raw_indented_ostream one level in (a function or struct body). Printing
// decides nothing: each op's attributes say what to print.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_TARGET_HOSTEMITTER_H
#define SLUICE_TARGET_HOSTEMITTER_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/IndentedOstream.h"
#include "mlir/Support/LLVM.h"

#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir::sluice::target {

/// One indented section of text.
class Section {
public:
  Section() : os(text), indented(os) { indented.indent(); }
  raw_indented_ostream &stream() { return indented; }
  /// The text so far.
  const std::string &str() const { return text; }
  /// Returns the text so far and starts the section again (empty).
  std::string take();

private:
  std::string text;
  llvm::raw_string_ostream os;
  raw_indented_ostream indented;
};

class HostEmitter {
public:
  /// The statements of the entry point being printed.
  raw_indented_ostream &body() { return bodySection.stream(); }
  /// Fields of the module's context struct.
  raw_indented_ostream &context() { return contextSection.stream(); }
  /// Statements of the module's create and destroy functions.
  raw_indented_ostream &create() { return createSection.stream(); }
  raw_indented_ostream &destroy() { return destroySection.stream(); }

  /// Returns the body printed so far and starts a new one.
  std::string takeBody() { return bodySection.take(); }
  const std::string &contextText() const { return contextSection.str(); }
  const std::string &createText() const { return createSection.str(); }
  const std::string &destroyText() const { return destroySection.str(); }

  /// The C expression of a `!sluice_exec.ptr` value (`args->x`,
  /// `(ctx->arena + 256ULL)`, `ctx->scratch`, `(ctx->saved + 0ULL)`). Fails
  /// with a diagnostic when the value is not the result of one of those ops.
  static FailureOr<std::string> pointer(Value ptr);

private:
  Section bodySection, contextSection, createSection, destroySection;
};

/// The C storage type of a tensor element type: float, sluice_f16,
/// sluice_bf16 (empty for anything else).
std::string storageType(Type elementType);

/// The C type a kernel parameter points to: the storage type, or
/// uint32_t (32-bit words) for a bit-packed mask (i1).
std::string kernelStorageType(Type elementType);

/// A C identifier made from `text`: every character outside [A-Za-z0-9_]
/// becomes '_', and a leading digit (or nothing) gets a '_' in front.
std::string cIdentifier(StringRef text);

/// True if `text` is a C identifier.
bool isCIdentifier(StringRef text);

/// `value` as a C float literal in hexadecimal ("0x1p+0f"), exact.
std::string hexFloat(double value);

} // namespace mlir::sluice::target

#endif // SLUICE_TARGET_HOSTEMITTER_H
