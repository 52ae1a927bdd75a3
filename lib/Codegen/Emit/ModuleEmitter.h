//===- ModuleEmitter.h - the emitter of one module --------------*- C++ -*-===//
//
// Private to lib/Codegen/Emit: ModuleEmitter.cpp walks the graphs,
// ModuleSkeleton.cpp prints the module around the entry points (context,
// create/destroy, the ABI tables, the header).
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_LIB_CODEGEN_EMIT_MODULEEMITTER_H
#define SLUICE_LIB_CODEGEN_EMIT_MODULEEMITTER_H

#include "EmitInternal.h"

#include "dialects/sluice_exec/ExecOps.h"

#include "dialects/sluice/Analysis/GemmMapping.h"
#include "sluice/Codegen/MemoryPlan.h"
#include "sluice/Target/HostEmitter.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OwningOpRef.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::sluice::emit {

/// One field of an args struct: a boundary tensor.
struct Field {
  std::string name, ident;
  NamedTensorType type;
  bool output = false;
};

/// Walks the fused graphs of one module: builds its sluice_exec entries
/// (decided once, printed by lib/Target), the generated kernels, and the
/// module around them (ModuleSkeleton.cpp).
class ModuleEmitter {
public:
  /// `plan` is the module's memory plan, or null to plan it here;
  /// `cudaArch` as for emitModule.
  ModuleEmitter(ModuleOp module, EmitTarget target, StringRef name,
                const MemoryPlan *plan = nullptr, StringRef cudaArch = {})
      : module(module), target(target), name(sanitizeModuleName(name)),
        fileStem(moduleFileStem(name)), plan(plan), cudaArch(cudaArch.str()),
        execBuilder(module.getContext()) {
    module.getContext()->getOrLoadDialect<exec::ExecDialect>();
    execModule = ModuleOp::create(module.getLoc());
  }
  /// Lowers and prints the module.
  FailureOr<EmittedModule> run();
  /// Lowers the module and hands over its sluice_exec entries.
  FailureOr<OwningOpRef<ModuleOp>> takeExecModule();

private:
  bool isCuda() const { return target == EmitTarget::Cuda; }
  LogicalResult collect();
  /// Builds the sluice_exec entries of both phases (and the generated
  /// kernels' text) and verifies them.
  LogicalResult lower();
  LogicalResult lowerPhase(GraphOp graph, bool backward);
  LogicalResult lowerFused(KernelOp kernel);
  /// The GPU whose SMs a column reduction's grid fills: the built-in target
  /// of the architecture compiled for (`cudaArch`, else the module's
  /// `sluice.target`; sm_80 -> a100, sm_90 -> h100), h100 without one.
  ColumnDevice columnDevice() const;
  LogicalResult lowerGemm(KernelOp kernel);
  /// The beta of a GEMM kernel's call; copies its accumulator into C first
  /// unless the memory plan stored the sum there.
  FailureOr<double> prepareAccumulator(KernelOp kernel, StringRef description,
                                       bool inPlace, Value cAddress,
                                       NamedTensorType cType);
  /// A `kind = streaming` kernel as a sluice_exec.attention
  /// (StreamingKernel.cpp).
  LogicalResult lowerStreaming(KernelOp kernel);
  /// The tiles of a streaming kernel on this target.
  FailureOr<exec::StreamTilesAttr> streamTiles(KernelOp kernel, Type element,
                                               int64_t headDim);
  /// A gemm kernel split for its call: the operands, the ops that read the
  /// product (`epilogue`) and those that do not (`independent`: bias
  /// gradients of A or B), with their outputs and those outputs' addresses,
  /// and where the kernel yields the product itself (null if it does not).
  struct GemmParts {
    Value a, b, yieldedC;
    SmallVector<Operation *> epilogue, independent;
    SmallVector<Value> epilogueOutputs, independentOutputs;
    SmallVector<Value> epilogueAddresses, independentAddresses;
  };
  LogicalResult lowerGemmCall(KernelOp kernel, const GemmMapping &g,
                              GemmParts parts,
                              function_ref<Value(Value)> outerValue, bool fold,
                              std::optional<double> knownBeta);
  LogicalResult lowerLeftover(KernelOp kernel, StringRef what,
                              ArrayRef<Operation *> ops,
                              ArrayRef<Value> outputs,
                              ArrayRef<Value> outputPointers, Value cPointer,
                              function_ref<Value(Value)> outerValue,
                              bool fallback);
  FailureOr<std::pair<exec::BlasEpilogue, Value>>
  foldedEpilogue(KernelOp kernel, const GemmMapping &g,
                 ArrayRef<Operation *> epilogue,
                 function_ref<Value(Value)> outerValue);
  FailureOr<Value> auxEpilogue(KernelOp kernel, const GemmMapping &g,
                               ArrayRef<Operation *> epilogue,
                               ArrayRef<Value> outputs,
                               ArrayRef<Value> addresses,
                               function_ref<Value(Value)> outerValue,
                               exec::BlasEpilogue &ltEpilogue,
                               Value &biasAddress, Value &auxAddress);
  Value biasGradientEpilogue(KernelOp kernel, const GemmMapping &g,
                             SmallVectorImpl<Operation *> &independent,
                             ArrayRef<Value> outputs, ArrayRef<Value> addresses,
                             exec::BlasEpilogue &ltEpilogue);
  /// The sluice_exec pointer of a top-level value (an arena view is made
  /// on first use), or failure with a diagnostic.
  FailureOr<Value> addressOf(Value value, Operation *user);
  /// A view of `buffer` in its region (saved or scratch).
  Value regionView(const ArenaBuffer &buffer);
  /// The C expression of addressOf(value, user).
  FailureOr<std::string> pointerOf(Value value, Operation *user);
  /// `pointer`, or a copy of its op in the entry being built when it was
  /// made in the other one.
  Value local(Value pointer);
  /// A boundary tensor's field of the args struct.
  Value argPointer(StringRef canonicalName);
  /// Prints the statements of `entry` with the target's printer.
  LogicalResult printEntry(exec::EntryOp entry, llvm::raw_ostream &os);
  /// An entry point's signature and argument checks.
  void printEntryPrologue(llvm::raw_ostream &os, bool isBackward) const;
  std::string header() const;
  /// The source file: prelude, lifecycle, the entry points `phases`, the
  /// generic entry points.
  std::string source(StringRef phases) const;
  /// Includes, the context struct, sluice_fail and the kernels.
  void printPrelude(llvm::raw_ostream &os) const;
  /// destroy, create, create_shared and last_error.
  void printLifecycle(llvm::raw_ostream &os) const;
  void printDestroy(llvm::raw_ostream &os) const;
  /// sluice_<N>_init, which both create functions call.
  void printCreate(llvm::raw_ostream &os) const;
  /// Allocates `bytes` into the context's `field` (nothing for 0; errors
  /// name it `what`), each line indented by `indent`.
  void printAllocation(llvm::raw_ostream &os, StringRef field, StringRef what,
                       uint64_t bytes, StringRef indent) const;
  /// The region sizes and create / create_shared in the header.
  void printHeaderLifecycle(llvm::raw_ostream &os) const;
  /// sluice_module_name ... sluice_run, and sluice_profile.
  void printGenericEntryPoints(llvm::raw_ostream &os) const;
  /// Events (CUDA) or times (CPU) per phase in the context.
  size_t profileSlots() const;
  std::string fieldsOf(ArrayRef<Field> fields, bool inputsConst) const;

  ModuleOp module;
  EmitTarget target;
  std::string name;
  /// The stem of the emitted file names.
  std::string fileStem;
  /// Where every intermediate lives: the caller's plan, or `ownPlan`.
  const MemoryPlan *plan = nullptr;
  std::optional<MemoryPlan> ownPlan;
  /// The CUDA architecture compiled for ("sm_90"), or empty: the module's
  /// `sluice.target`.
  std::string cudaArch;
  GraphOp forward, backward;
  std::vector<Field> forwardFields, backwardFields;
  /// The sluice_exec pointer of every top-level value met so far.
  llvm::DenseMap<Value, Value> pointers;
  /// The emission-level IR built while walking the graphs: one
  /// sluice_exec.entry per phase.
  OwningOpRef<ModuleOp> execModule;
  OpBuilder execBuilder;
  target::HostEmitter printer;
  /// Top-level values stored one bit per element (and their views).
  llvm::DenseSet<Value> packedValues;
  std::string kernelText;
  llvm::raw_string_ostream kernels{kernelText};
  unsigned kernelCount = 0;
  /// The generated kernels of GEMM fallback regions (numbered apart).
  unsigned fallbackCount = 0;
  /// Per phase, the description of every top-level kernel in launch order
  /// (the rows of sluice_profile).
  std::vector<std::string> profiledKernels[2];
  /// The largest GEMM product nothing stores: it goes to the scratch
  /// region after the memory plan's buffers.
  uint64_t gemmProductBytes = 0;
  /// Where things are in the scratch region (scratchLayout()).
  struct ScratchLayout {
    uint64_t workspaceOffset = 0, workspaceBytes = 0, totalBytes = 0;
  };
  ScratchLayout scratchLayout() const;
  /// True once a streaming kernel was lowered: the source includes the
  /// runtime's streaming header and the directory gets it.
  bool usesStreaming = false;
};

} // namespace mlir::sluice::emit

#endif // SLUICE_LIB_CODEGEN_EMIT_MODULEEMITTER_H
