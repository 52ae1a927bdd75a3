//===- TranslateToCpp.cpp - sluice_exec printed as portable C++ -----------===//
//
// One print function per sluice_exec op, chosen by a TypeSwitch. A GEMM
// prints as a call of sluice_cpu_gemm (include/sluice/Runtime); the CPU has
// no library epilogue, so the lowering never asks for one here.
//
//===----------------------------------------------------------------------===//

#include "sluice/Target/Translate.h"

#include "dialects/sluice_exec/ExecOps.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::sluice;
using namespace mlir::sluice::target;

namespace {
StringRef cppBool(exec::BlasOp op) {
  return op == exec::BlasOp::t ? "true" : "false";
}

LogicalResult printOperation(HostEmitter &emitter, exec::GemmOp op) {
  if (op.getEpilogue() != exec::BlasEpilogue::none)
    return op.emitOpError()
           << "has epilogue '" << stringifyBlasEpilogue(op.getEpilogue())
           << "'; the C++ backend's GEMM folds none (lower it as a kernel)";
  FailureOr<std::string> a = HostEmitter::pointer(op.getA());
  FailureOr<std::string> b = HostEmitter::pointer(op.getB());
  FailureOr<std::string> c = HostEmitter::pointer(op.getC());
  if (failed(a) || failed(b) || failed(c))
    return failure();
  raw_indented_ostream &os = emitter.body();
  printGemmHeading(os, op);
  os << "if (sluice_cpu_gemm(" << cppBool(op.getTransA()) << ", "
     << cppBool(op.getTransB()) << ", " << op.getM() << "LL, " << op.getN()
     << "LL, " << op.getK() << "LL, alpha, (const "
     << storageType(op.getAType()) << " *)(" << *a << "), " << op.getLda()
     << "LL, " << op.getStrideA() << "LL, (const " << storageType(op.getBType())
     << " *)(" << *b << "), " << op.getLdb() << "LL, " << op.getStrideB()
     << "LL, (" << storageType(op.getCType()) << " *)(" << *c << "), "
     << op.getLdc() << "LL, " << op.getStrideC() << "LL, " << op.getBatchCount()
     << "LL" << (op.getBeta().convertToDouble() != 0.0 ? ", 1.0f" : "")
     << "))\n";
  os.indent() << "return sluice_fail(ctx, SLUICE_ERROR_ALLOC, \"%s: no "
                 "scratch memory for the GEMM of "
              << op.getLabel() << "\", phase);\n";
  os.unindent();
  os.unindent() << "}\n";
  return success();
}

LogicalResult printOperation(HostEmitter &emitter, exec::LaunchOp op) {
  if (op.getSchedule().getMode() == exec::ScheduleMode::column_block)
    return op.emitOpError()
           << "has a column_block schedule, which only the CUDA printer "
              "launches (two kernels and a workspace)";
  raw_indented_ostream &os = emitter.body();
  if (failed(printLaunchHeading(os, op, [&](StringRef pointer, int64_t bytes) {
        os << "memset((void *)(" << pointer << "), 0, " << bytes << "ULL);\n";
      })))
    return failure();
  os << op.getKernel();
  return printLaunchArguments(os, op);
}

LogicalResult printOperation(HostEmitter &emitter, exec::CopyOp op) {
  FailureOr<std::string> source = HostEmitter::pointer(op.getSource());
  FailureOr<std::string> target = HostEmitter::pointer(op.getTarget());
  if (failed(source) || failed(target))
    return failure();
  emitter.body() << "memcpy((void *)" << *target << ", (const void *)("
                 << *source << "), " << op.getBytes() << "ULL);\n";
  return success();
}
} // namespace

LogicalResult mlir::sluice::target::printCppOperation(HostEmitter &emitter,
                                                      Operation *op) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<exec::GemmOp, exec::LaunchOp, exec::CopyOp>(
          [&](auto typed) { return printOperation(emitter, typed); })
      .Case([&](exec::AttentionOp attention) {
        return printAttention(emitter, attention, /*cuda=*/false);
      })
      .Default([&](Operation *other) {
        return printSharedOperation(emitter, other, "C++");
      });
}
