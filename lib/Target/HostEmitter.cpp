//===- HostEmitter.cpp - state shared by the sluice_exec printers ---------===//

#include "sluice/Target/HostEmitter.h"
#include "sluice/Target/Translate.h"

#include "dialects/sluice_exec/ExecOps.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cstdio>

using namespace mlir;
using namespace mlir::sluice;
using namespace mlir::sluice::target;

std::string Section::take() {
  std::string out = std::move(text);
  text.clear();
  return out;
}

FailureOr<std::string> HostEmitter::pointer(Value ptr) {
  Operation *def = ptr.getDefiningOp();
  if (auto arg = llvm::dyn_cast_or_null<exec::ArgOp>(def);
      arg && !isCIdentifier(arg.getField()))
    return arg.emitOpError()
           << "field '" << arg.getField()
           << "' is not a C identifier (run --sluice-legalize-for-emission)";
  std::optional<std::string> text =
      llvm::TypeSwitch<Operation *, std::optional<std::string>>(def)
          .Case([](exec::ArgOp op) { return "args->" + op.getField().str(); })
          .Case([](exec::ArenaOp op) {
            return "(ctx->arena + " + std::to_string(op.getOffset()) + "ULL)";
          })
          .Case([](exec::ScratchOp) { return std::string("ctx->scratch"); })
          .Case([](exec::SavedOp op) {
            return "(ctx->saved + " + std::to_string(op.getOffset()) + "ULL)";
          })
          .Default([](Operation *) { return std::nullopt; });
  if (text)
    return *text;
  if (def)
    return def->emitOpError() << "is not a sluice_exec pointer the printers "
                                 "can address (arg, arena, scratch or saved)";
  return failure();
}

std::string mlir::sluice::target::storageType(Type elementType) {
  if (elementType.isF32())
    return "float";
  if (elementType.isF16())
    return "sluice_f16";
  if (elementType.isBF16())
    return "sluice_bf16";
  return "";
}

std::string mlir::sluice::target::cIdentifier(StringRef text) {
  std::string out;
  for (char c : text)
    out += (llvm::isAlnum(c) || c == '_') ? c : '_';
  if (out.empty() || llvm::isDigit(out.front()))
    out = "_" + out;
  return out;
}

bool mlir::sluice::target::isCIdentifier(StringRef text) {
  return !text.empty() && cIdentifier(text) == text;
}

std::string mlir::sluice::target::kernelStorageType(Type elementType) {
  return elementType.isInteger(1) ? "uint32_t" : storageType(elementType);
}

std::string mlir::sluice::target::hexFloat(double value) {
  char text[64];
  std::snprintf(text, sizeof(text), "%af", static_cast<float>(value));
  return text;
}

LogicalResult mlir::sluice::target::printSharedOperation(HostEmitter &emitter,
                                                         Operation *op,
                                                         StringRef targetName) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<exec::ArgOp, exec::ArenaOp, exec::ScratchOp, exec::SavedOp>(
          [](Operation *) { return success(); })
      .Case([&](exec::TimerBeginOp timer) {
        emitter.body() << "SLUICE_PROFILE_BEGIN(" << timer.getPhase() << ", "
                       << timer.getSlot() << ");\n";
        return success();
      })
      .Case([&](exec::TimerEndOp timer) {
        emitter.body() << "SLUICE_PROFILE_END(" << timer.getPhase() << ", "
                       << timer.getSlot() << ");\n";
        return success();
      })
      .Default([&](Operation *other) {
        return other->emitOpError() << "cannot be printed as " << targetName;
      });
}

void mlir::sluice::target::printGemmHeading(raw_indented_ostream &os,
                                            exec::GemmOp op) {
  double alpha = op.getAlpha().convertToDouble();
  os << "// " << op.getLabel() << ": C[" << op.getM() << " x " << op.getN()
     << "] = " << alpha << " * op(A)[" << op.getM() << " x " << op.getK()
     << "] op(B)" << (op.getBeta().convertToDouble() != 0.0 ? " + C" : "")
     << ", batch " << op.getBatchCount() << "\n{\n";
  os.indent() << "const float alpha = " << hexFloat(alpha) << ";\n";
}

LogicalResult mlir::sluice::target::printLaunchHeading(
    raw_indented_ostream &os, exec::LaunchOp op,
    function_ref<void(StringRef, int64_t)> printClear) {
  os << "// " << op.getLabel() << "\n";
  for (auto [output, bytes] :
       llvm::zip_equal(op.getOutputs(), op.getClearBytes())) {
    if (!bytes)
      continue;
    FailureOr<std::string> pointer = HostEmitter::pointer(output);
    if (failed(pointer))
      return failure();
    printClear(*pointer, bytes);
  }
  return success();
}

LogicalResult
mlir::sluice::target::printLaunchArguments(raw_indented_ostream &os,
                                           exec::LaunchOp op, StringRef extra) {
  os << "(";
  auto print = [&](ValueRange pointers, ArrayAttr types,
                   StringRef qualifier) -> LogicalResult {
    for (auto [pointer, type] : llvm::zip_equal(pointers, types)) {
      FailureOr<std::string> text = HostEmitter::pointer(pointer);
      if (failed(text))
        return failure();
      os << "(" << qualifier
         << kernelStorageType(llvm::cast<TypeAttr>(type).getValue()) << " *)("
         << *text << "), ";
    }
    return success();
  };
  if (failed(print(op.getInputs(), op.getInputTypes(), "const ")) ||
      failed(print(op.getOutputs(), op.getOutputTypes(), "")))
    return failure();
  os << "args->seed" << (extra.empty() ? "" : ", ") << extra << ");\n";
  return success();
}

LogicalResult mlir::sluice::target::translateEntries(
    Operation *root, raw_ostream &os,
    function_ref<LogicalResult(HostEmitter &, Operation *)> print) {
  HostEmitter emitter;
  std::string entries;
  llvm::raw_string_ostream es(entries);
  WalkResult walk = root->walk([&](exec::EntryOp entry) {
    for (Operation &op : entry.getBody().front())
      if (failed(print(emitter, &op)))
        return WalkResult::interrupt();
    es << "/* entry " << entry.getSymName() << " */\n" << emitter.takeBody();
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  auto section = [&](StringRef name, const std::string &text) {
    if (!text.empty())
      os << "/* " << name << " */\n" << text;
  };
  section("context fields", emitter.contextText());
  section("create", emitter.createText());
  section("destroy", emitter.destroyText());
  os << entries;
  return success();
}
