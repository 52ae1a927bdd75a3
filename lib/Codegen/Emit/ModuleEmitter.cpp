//===- ModuleEmitter.cpp - the C ABI around the kernels -------------------===//
//
// Walks the forward (and backward) graph after --sluice-fuse and lowers it
// to sluice_exec, one entry per phase: every kernel becomes a launch (fused
// kernels through the shared core, gemm kernels as a sluice_exec.gemm plus
// the core for what cuBLASLt does not fold), renames become pointer
// aliases, and the graph's boundary maps onto the args structs of the C
// ABI. Intermediates live in the scratch region, saved tensors in the saved
// region (kept between the forward and the backward), at the MemoryPlan's
// offsets. Each exec op is
// verified and printed by lib/Target as it is made.
//
//===----------------------------------------------------------------------===//

#include "ModuleEmitter.h"

#include "dialects/sluice/SluiceBuilders.h"

#include "sluice/Analysis/Target.h"
#include "sluice/Target/Translate.h"

#include "mlir/IR/Verifier.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"

#include <climits>

using namespace mlir;
using namespace mlir::sluice;
using namespace mlir::sluice::emit;

namespace mlir::sluice::emit {
extern const char *const kRuntimeHeader;
extern const char *const kHostHeader;
extern const char *const kKernelsHeader;
extern const char *const kCpuGemmHeader;
extern const char *const kPhiloxHeader;
extern const char *const kStreamHeader;
extern const char *const kStreamCpuHeader;
extern const char *const kStreamCudaHeader;
} // namespace mlir::sluice::emit

std::string mlir::sluice::emit::describeKernel(KernelOp kernel) {
  std::string text = "kernel";
  if (auto name = kernel->getAttrOfType<StringAttr>("sluice.name"))
    text += " '" + name.getValue().str() + "'";
  SmallVector<StringRef> members;
  for (Attribute member : kernel.getMembers())
    members.push_back(llvm::cast<StringAttr>(member).getValue());
  text += " (" + std::string(stringifyKernelKind(kernel.getKind()));
  if (!members.empty())
    text += ": " + llvm::join(members, ", ");
  text += ")";
  // The text goes into C string literals.
  std::string safe;
  for (char c : text)
    if (c != '"' && c != '\\' && c != '%')
      safe += c;
  return safe;
}

LogicalResult ModuleEmitter::collect() {
  for (GraphOp graph : module.getOps<GraphOp>()) {
    GraphOp &slot = graph.getPhase() == Phase::forward ? forward : backward;
    if (slot)
      return graph.emitOpError()
             << "is a second " << stringifyPhase(graph.getPhase())
             << " graph; code generation emits one layer (one forward graph "
                "and at most one backward graph) per module";
    slot = graph;
  }
  if (!forward)
    return module.emitError() << "has no forward sluice.graph: nothing to emit";
  auto field = [](StringRef canonical, Type type, bool output) {
    return Field{canonical.str(), identifier(canonical),
                 llvm::cast<NamedTensorType>(type), output};
  };
  for (unsigned i = 0; i < forward.getNumArguments(); ++i)
    forwardFields.push_back(
        field(forward.getArgName(i), forward.getArgumentTypes()[i], false));
  for (unsigned i = 0; i < forward.getNumResults(); ++i)
    if (!forward.isSavedResult(i))
      forwardFields.push_back(
          field(forward.getResultName(i), forward.getResultTypes()[i], true));
  if (backward) {
    for (Field f : forwardFields) {
      f.output = false;
      backwardFields.push_back(f);
    }
    for (unsigned i = 0; i < backward.getNumArguments(); ++i)
      if (!backward.isSavedArg(i))
        backwardFields.push_back(field(backward.getArgName(i),
                                       backward.getArgumentTypes()[i], false));
    for (unsigned i = 0; i < backward.getNumResults(); ++i)
      backwardFields.push_back(
          field(backward.getResultName(i), backward.getResultTypes()[i], true));
  }
  for (const std::vector<Field> *fields : {&forwardFields, &backwardFields})
    for (const Field &f : *fields)
      if (storageType(f.type.getElementType()).empty())
        return module.emitError()
               << "boundary tensor '" << f.name << "' has element type "
               << f.type.getElementType()
               << "; the C ABI carries f32, f16 and bf16";
  return success();
}

FailureOr<std::string> ModuleEmitter::pointerOf(Value value, Operation *user) {
  FailureOr<Value> address = addressOf(value, user);
  if (failed(address))
    return failure();
  return target::HostEmitter::pointer(*address);
}

Value ModuleEmitter::argPointer(StringRef canonicalName) {
  return exec::ArgOp::create(execBuilder, execModule->getLoc(),
                             exec::PtrType::get(module.getContext()),
                             canonicalName);
}

LogicalResult ModuleEmitter::printEntry(exec::EntryOp entry,
                                        llvm::raw_ostream &os) {
  for (Operation &op : entry.getBody().front())
    if (failed(isCuda() ? target::printCudaOperation(printer, &op)
                        : target::printCppOperation(printer, &op)))
      return failure();
  os << printer.takeBody();
  return success();
}

Value ModuleEmitter::local(Value pointer) {
  Block *block = execBuilder.getInsertionBlock();
  if (pointer.getParentRegion()->isAncestor(block->getParent()))
    return pointer;
  // A pointer op of the other phase (a saved tensor), or one made in a
  // GEMM's fallback region: entries are isolated and the region's values
  // are not visible after it, so the block gets its own copy of the op.
  return execBuilder.clone(*pointer.getDefiningOp())->getResult(0);
}

Value ModuleEmitter::regionView(const ArenaBuffer &buffer) {
  auto type = exec::PtrType::get(module.getContext());
  Location loc = execModule->getLoc();
  if (buffer.saved)
    return exec::SavedOp::create(execBuilder, loc, type, buffer.offset);
  return exec::ArenaOp::create(execBuilder, loc, type, buffer.offset);
}

FailureOr<Value> ModuleEmitter::addressOf(Value value, Operation *user) {
  if (auto it = pointers.find(value); it != pointers.end()) {
    Value pointer = local(it->second);
    pointers[value] = pointer;
    return pointer;
  }
  if (const ArenaBuffer *buffer = plan->lookup(value)) {
    Value pointer = regionView(*buffer);
    pointers[value] = pointer;
    return pointer;
  }
  return user->emitOpError()
         << "reads or writes a tensor that has neither a boundary field nor "
            "an arena buffer in the memory plan";
}

ColumnDevice ModuleEmitter::columnDevice() const {
  StringRef arch = cudaArch;
  if (arch.empty())
    if (auto attr = module->getAttrOfType<StringAttr>("sluice.target"))
      arch = attr.getValue();
  // A built-in target always parses.
  GpuTarget gpu = llvm::cantFail(
      builtinTarget(defaultTargetForArch(arch).value_or("h100")));
  return ColumnDevice{gpu.smCount, gpu.maxThreadsPerSm};
}

LogicalResult ModuleEmitter::lowerFused(KernelOp kernel) {
  SmallVector<Operation *> ops = kernelMembers(kernel);
  std::string description = describeKernel(kernel);
  if (ops.empty())
    return kernel.emitOpError() << "is empty: nothing to emit";
  std::string fn = "sluice_kernel_" + std::to_string(kernelCount++);
  if (auto label = kernel->getAttrOfType<StringAttr>("sluice.name"))
    fn += "_" + identifier(label.getValue());
  SmallVector<Value> yielded(kernel.getYield().getOperands());
  FailureOr<FusedGroup> group = makeFusedGroup(fn, description, ops, yielded);
  if (failed(group))
    return failure();
  SmallVector<Value> inputs, outputs;
  for (auto [index, input] : llvm::enumerate(group->inputs)) {
    input = resolveView(input);
    auto arg = llvm::cast<BlockArgument>(input);
    Value outer = kernel.getInputs()[arg.getArgNumber()];
    FailureOr<Value> pointer = addressOf(outer, kernel);
    if (failed(pointer))
      return failure();
    inputs.push_back(*pointer);
    group->inputPacked[index] = packedValues.contains(outer);
  }
  for (auto [index, result] : llvm::enumerate(kernel.getResults())) {
    FailureOr<Value> pointer = addressOf(result, kernel);
    if (failed(pointer))
      return failure();
    outputs.push_back(*pointer);
    group->outputPacked[index] = kernel.isPacked(index);
    if (kernel.isPacked(index))
      packedValues.insert(result);
  }
  setDisjointPointers(*group, inputs, outputs);
  if (isCuda())
    scheduleColumnReduction(*group, columnDevice());
  if (failed(emitFusedKernel(*group, target, kernels)))
    return failure();
  buildLaunch(execBuilder, *group, inputs, outputs);
  return success();
}

/// The epilogue cuBLASLt folds into the GEMM of `kernel` whose epilogue
/// ops are `epilogue` (they compute the kernel's one output in place), and
/// the address of its bias vector: `none` when the kernel's epilogue is not
/// one cuBLASLt has, or its bias is not one packed vector over the GEMM's
/// rows in C's element type.
FailureOr<std::pair<exec::BlasEpilogue, Value>>
ModuleEmitter::foldedEpilogue(KernelOp kernel, const GemmMapping &g,
                              ArrayRef<Operation *> epilogue,
                              function_ref<Value(Value)> outerValue) {
  Value product = kernel.getContraction().getResult();
  llvm::SmallPtrSet<Operation *, 8> epilogueOps(epilogue.begin(),
                                                epilogue.end());
  SmallVector<Value> others;
  for (Operation *op : epilogue)
    for (Value operand : op->getOperands())
      if (operand != product && !epilogueOps.contains(operand.getDefiningOp()))
        others.push_back(operand);
  std::optional<Epilogue> folded = kernel.getEpilogue();
  Value bias;
  if (folded && hasBias(*folded) && others.size() == 1) {
    auto biasType = llvm::cast<NamedTensorType>(others.front().getType());
    Type cElement =
        llvm::cast<NamedTensorType>(product.getType()).getElementType();
    if (isBiasEpilogueLegal(g, biasType) &&
        biasType.getElementType() == cElement) {
      FailureOr<Value> address = addressOf(outerValue(others.front()), kernel);
      if (failed(address))
        return failure();
      bias = *address;
    }
  }
  using exec::BlasEpilogue;
  std::pair<BlasEpilogue, Value> none{BlasEpilogue::none, Value()};
  if (!folded)
    return none;
  if (others.empty())
    return *folded == Epilogue::relu
               ? std::make_pair(BlasEpilogue::relu, Value())
           : *folded == Epilogue::gelu
               ? std::make_pair(BlasEpilogue::gelu, Value())
               : none;
  if (!bias)
    return none;
  switch (*folded) {
  case Epilogue::bias:
    return std::make_pair(BlasEpilogue::bias, bias);
  case Epilogue::bias_relu:
    return std::make_pair(BlasEpilogue::bias_relu, bias);
  case Epilogue::bias_gelu:
    return std::make_pair(BlasEpilogue::bias_gelu, bias);
  case Epilogue::bias_gelu_aux:
    return std::make_pair(BlasEpilogue::bias_gelu_aux, bias);
  default:
    return none;
  }
}

/// Whether cuBLASLt runs `epilogue` with an aux matrix.
static bool usesAux(std::optional<Epilogue> epilogue) {
  return epilogue == Epilogue::bias_gelu_aux || epilogue == Epilogue::dgelu ||
         epilogue == Epilogue::dgelu_bgrad;
}

/// For a gemm kernel whose epilogue cuBLASLt runs with an aux matrix laid
/// out as C (usesAux): the address of C, with `ltEpilogue`, `biasAddress`
/// and `auxAddress` set. `bias_gelu_aux` yields the biased product (the aux
/// matrix, written) and its gelu (C); `dgelu` yields C = the product times
/// the gelu's derivative at an input (the aux matrix, read), and
/// `dgelu_bgrad` also the sum of C over its columns (written through the
/// bias pointer). A null address when cuBLASLt cannot (the aux leading
/// dimension and batch stride must be multiples of 8 elements, the bias one
/// packed vector in C's type): the epilogue then runs as a generated kernel.
FailureOr<Value> ModuleEmitter::auxEpilogue(
    KernelOp kernel, const GemmMapping &g, ArrayRef<Operation *> epilogue,
    ArrayRef<Value> outputs, ArrayRef<Value> addresses,
    function_ref<Value(Value)> outerValue, exec::BlasEpilogue &ltEpilogue,
    Value &biasAddress, Value &auxAddress) {
  Value product = kernel.getContraction().getResult();
  if (g.ldc % 8 != 0 || (g.batchCount > 1 && g.strideC % 8 != 0) ||
      outputs.size() != epilogue.size())
    return Value();
  // The address of the epilogue op `op`'s result, if the kernel yields it.
  auto addressOfResult = [&](Operation *op) -> Value {
    for (auto [output, address] : llvm::zip_equal(outputs, addresses))
      if (output.getDefiningOp() == op)
        return address;
    return Value();
  };
  if (kernel.getEpilogue() == Epilogue::bias_gelu_aux) {
    // The bias map, then the gelu of it; both yielded, in C's type.
    if (epilogue.size() != 2 || llvm::any_of(outputs, [&](Value v) {
          return v.getType() != product.getType();
        }))
      return Value();
    FailureOr<std::pair<exec::BlasEpilogue, Value>> folded =
        foldedEpilogue(kernel, g, epilogue, outerValue);
    if (failed(folded))
      return failure();
    Value aux = addressOfResult(epilogue[0]), c = addressOfResult(epilogue[1]);
    if (folded->first != exec::BlasEpilogue::bias_gelu_aux || !aux || !c)
      return Value();
    std::tie(ltEpilogue, biasAddress) = *folded;
    auxAddress = aux;
    return c;
  }
  bool bgrad = kernel.getEpilogue() == Epilogue::dgelu_bgrad;
  auto map = llvm::dyn_cast<MapOp>(epilogue.front());
  if (epilogue.size() != (bgrad ? 2u : 1u) || !map ||
      map.getInputs().size() != 2 || map.getInputs()[1] != product ||
      map.getResult().getType() != product.getType() ||
      !outerValue(map.getInputs()[0]))
    return Value();
  Value c = addressOfResult(map);
  Value gradient = bgrad ? addressOfResult(epilogue.back()) : Value();
  if (!c || (bgrad && !gradient))
    return Value();
  FailureOr<Value> aux = addressOf(outerValue(map.getInputs()[0]), kernel);
  if (failed(aux))
    return failure();
  ltEpilogue =
      bgrad ? exec::BlasEpilogue::dgelu_bgrad : exec::BlasEpilogue::dgelu;
  biasAddress = gradient;
  auxAddress = *aux;
  return c;
}

/// For a `bgrada` / `bgradb` gemm kernel: the address its bias gradient is
/// written to, with `ltEpilogue` set, when cuBLASLt's BGRADA / BGRADB can
/// write it through the bias pointer (the sum of A / B over k, one packed
/// vector of m / n elements in C's type; the mapping as the fusion planner
/// checked it, bgradOperandIsA); `independent` is then cleared. A null value
/// otherwise (and on the C++ target): the sum then runs as a generated
/// kernel after the GEMM, reading the operand again.
Value ModuleEmitter::biasGradientEpilogue(
    KernelOp kernel, const GemmMapping &g,
    SmallVectorImpl<Operation *> &independent, ArrayRef<Value> outputs,
    ArrayRef<Value> addresses, exec::BlasEpilogue &ltEpilogue) {
  std::optional<Epilogue> planned = kernel.getEpilogue();
  if (!isCuda() || (planned != Epilogue::bgrada && planned != Epilogue::bgradb))
    return Value();
  auto reduce = independent.size() == 1
                    ? llvm::dyn_cast<ReduceOp>(independent.front())
                    : ReduceOp();
  if (!reduce || outputs.size() != 1 || outputs.front() != reduce.getResult())
    return Value();
  std::optional<bool> isA = bgradOperandIsA(g, reduce);
  if (!isA || *isA != (planned == Epilogue::bgrada) ||
      reduce.getResult().getType().getElementType() !=
          kernel.getContraction().getResult().getType().getElementType())
    return Value();
  ltEpilogue = *isA ? exec::BlasEpilogue::bgrada : exec::BlasEpilogue::bgradb;
  independent.clear();
  return addresses.front();
}

/// Runs the ops `ops` of gemm kernel `kernel` that the BLAS did not fold
/// (`what`: "epilogue" or "bgrad") as a generated kernel storing `outputs`
/// at `outputPointers`; the product is read at `cPointer`. A `fallback`
/// kernel (of a folded call's fallback region) is numbered apart
/// (sluice_fallback_<n>_...), so the other kernels keep their names.
LogicalResult ModuleEmitter::lowerLeftover(
    KernelOp kernel, StringRef what, ArrayRef<Operation *> ops,
    ArrayRef<Value> outputs, ArrayRef<Value> outputPointers, Value cPointer,
    function_ref<Value(Value)> outerValue, bool fallback) {
  if (ops.empty())
    return success();
  std::string fn = fallback
                       ? "sluice_fallback_" + std::to_string(fallbackCount++)
                       : "sluice_kernel_" + std::to_string(kernelCount++);
  if (auto label = kernel->getAttrOfType<StringAttr>("sluice.name"))
    fn += "_" + identifier(label.getValue());
  fn += "_" + what.str();
  FailureOr<FusedGroup> group = makeFusedGroup(
      fn, describeKernel(kernel) + " " + what.str(), ops, outputs);
  if (failed(group))
    return failure();
  SmallVector<Value> inputs;
  for (Value input : group->inputs) {
    if (input == kernel.getContraction().getResult()) {
      inputs.push_back(cPointer);
      continue;
    }
    Value outer = outerValue(input);
    if (!outer)
      return kernel.emitOpError() << "epilogue reads a value it cannot "
                                     "address";
    FailureOr<Value> pointer = addressOf(outer, kernel);
    if (failed(pointer))
      return failure();
    inputs.push_back(*pointer);
    group->inputPacked[inputs.size() - 1] = packedValues.contains(outer);
  }
  setDisjointPointers(*group, inputs, outputPointers);
  if (isCuda())
    scheduleColumnReduction(*group, columnDevice());
  if (failed(emitFusedKernel(*group, target, kernels)))
    return failure();
  buildLaunch(execBuilder, *group, inputs, outputPointers);
  return success();
}

/// Splits the ops of gemm kernel `kernel` other than its contraction and
/// the views of its inputs into those that read the product (`epilogue`, in
/// order) and those that do not (`independent`: bias gradients of A or B).
static void splitGemmKernel(KernelOp kernel,
                            function_ref<Value(Value)> outerValue,
                            SmallVectorImpl<Operation *> &epilogue,
                            SmallVectorImpl<Operation *> &independent) {
  Value product = kernel.getContraction().getResult();
  llvm::SmallPtrSet<Operation *, 8> readsProduct;
  for (Operation &op : kernel.getBlock().without_terminator()) {
    if (&op == product.getDefiningOp())
      continue;
    if (auto rename = llvm::dyn_cast<RenameOp>(op))
      if (outerValue(rename.getResult()))
        continue; // a view of an input
    bool readsC = llvm::any_of(op.getOperands(), [&](Value operand) {
      return operand == product ||
             readsProduct.contains(operand.getDefiningOp());
    });
    if (readsC) {
      readsProduct.insert(&op);
      epilogue.push_back(&op);
    } else {
      independent.push_back(&op);
    }
  }
}

/// An accumulating GEMM adds its product to C (beta = 1), which holds the
/// accumulator: in place when the memory plan put the sum there, else copied
/// first. Returns the GEMM's beta (0 for a kernel without an accumulator).
FailureOr<double> ModuleEmitter::prepareAccumulator(KernelOp kernel,
                                                    StringRef description,
                                                    bool inPlace,
                                                    Value cAddress,
                                                    NamedTensorType cType) {
  BlockArgument accumulator = kernel.getAccumulator();
  if (!accumulator)
    return 0.0;
  if (!inPlace)
    return kernel.emitOpError()
           << "(" << description << ") must yield its accumulated sum";
  if (!kernel.getAccumulatedStorage()) {
    FailureOr<Value> source =
        addressOf(kernel.getInputs()[accumulator.getArgNumber()], kernel);
    if (failed(source))
      return failure();
    exec::CopyOp::create(execBuilder, kernel.getLoc(), *source, cAddress,
                         *cType.getNumBytes());
  }
  return 1.0;
}

LogicalResult ModuleEmitter::lowerGemm(KernelOp kernel) {
  std::string description = describeKernel(kernel);
  ContractOp contract = kernel.getContraction();
  if (!contract)
    return kernel.emitOpError() << "is a gemm kernel without a contraction";
  FailureOr<GemmMapping> mapping = mapContraction(contract);
  if (failed(mapping))
    return contract.emitOpError()
           << "in " << description
           << " has no strided-batched GEMM mapping for its layouts (run "
              "--sluice-legalize-contractions first)";
  const GemmMapping &g = *mapping;
  for (int64_t value : {g.m, g.n, g.k, g.lda, g.ldb, g.ldc, g.batchCount})
    if (value > INT_MAX)
      return contract.emitOpError()
             << "in " << description << " has a GEMM size or leading "
             << "dimension " << value << " beyond the 32-bit BLAS interface";

  // Top-level pointers of the body's block arguments and yielded values.
  auto outerValue = [&](Value inner) -> Value {
    inner = resolveView(inner);
    if (auto arg = llvm::dyn_cast<BlockArgument>(inner))
      return kernel.getInputs()[arg.getArgNumber()];
    return {};
  };
  if (!outerValue(g.a) || !outerValue(g.b))
    return contract.emitOpError()
           << "in " << description << " must read the kernel's inputs directly";
  FailureOr<Value> aAddress = addressOf(outerValue(g.a), kernel);
  FailureOr<Value> bAddress = addressOf(outerValue(g.b), kernel);
  if (failed(aAddress) || failed(bAddress))
    return failure();
  if (packedValues.contains(outerValue(g.a)) ||
      packedValues.contains(outerValue(g.b)))
    return contract.emitOpError()
           << "in " << description
           << " reads a bit-packed mask; the BLAS needs it unpacked";

  // Split the other ops: those that read C (the epilogue) and those that
  // do not (bias gradients of A or B).
  GemmParts parts;
  parts.a = *aAddress;
  parts.b = *bAddress;
  splitGemmKernel(kernel, outerValue, parts.epilogue, parts.independent);
  llvm::SmallPtrSet<Operation *, 8> epilogueOps(parts.epilogue.begin(),
                                                parts.epilogue.end());
  ValueRange yielded = kernel.getYield().getOperands();
  for (auto [index, value] : llvm::enumerate(yielded)) {
    if (kernel.isPacked(index))
      return kernel.emitOpError()
             << "result #" << index << " of " << description
             << " is bit-packed; code generation stores masks unpacked (fuse "
                "without packing)";
    FailureOr<Value> address = addressOf(kernel.getResult(index), kernel);
    if (failed(address))
      return failure();
    if (value == contract.getResult()) {
      if (!parts.yieldedC)
        parts.yieldedC = *address;
      else
        return kernel.emitOpError()
               << "yields its contraction twice; not supported";
      continue;
    }
    bool inEpilogue = epilogueOps.contains(value.getDefiningOp());
    (inEpilogue ? parts.epilogueOutputs : parts.independentOutputs)
        .push_back(value);
    (inEpilogue ? parts.epilogueAddresses : parts.independentAddresses)
        .push_back(*address);
  }
  return lowerGemmCall(kernel, g, std::move(parts), outerValue,
                       /*fold=*/isCuda(), /*knownBeta=*/std::nullopt);
}

/// The GEMM call of a gemm kernel and the generated kernels for what the
/// library does not fold. With `fold` (CUDA), cuBLASLt folds what it can;
/// a folded call then gets a fallback region holding this lowering without
/// `fold` (the plain GEMM and the kernels of the C++ target), which the
/// CUDA printer runs where cuBLASLt refuses the epilogue at run time.
/// `knownBeta` is the beta of the folded call whose fallback this is: its
/// accumulator, if any, was copied into C before that call.
LogicalResult
ModuleEmitter::lowerGemmCall(KernelOp kernel, const GemmMapping &g,
                             GemmParts parts,
                             function_ref<Value(Value)> outerValue, bool fold,
                             std::optional<double> knownBeta) {
  std::string description = describeKernel(kernel);
  ContractOp contract = kernel.getContraction();
  // The fallback lowers the kernel as it was split.
  GemmParts unfolded = parts;
  SmallVector<Operation *> &epilogue = parts.epilogue;
  SmallVector<Operation *> &independent = parts.independent;
  ArrayRef<Value> epilogueOutputs = parts.epilogueOutputs;
  ArrayRef<Value> independentOutputs = parts.independentOutputs;
  ArrayRef<Value> epilogueOutputAddresses = parts.epilogueAddresses;
  ArrayRef<Value> independentOutputAddresses = parts.independentAddresses;
  Value cAddress = parts.yieldedC;
  NamedTensorType cType = contract.getResult().getType();
  // cuBLASLt's GELU_AUX_BIAS and DGELU(_BGRAD) take an aux matrix in C's
  // layout.
  exec::BlasEpilogue ltEpilogue = exec::BlasEpilogue::none;
  Value biasAddress, auxAddress;
  if (!cAddress && fold && independent.empty() &&
      usesAux(kernel.getEpilogue())) {
    FailureOr<Value> c = auxEpilogue(kernel, g, epilogue, epilogueOutputs,
                                     epilogueOutputAddresses, outerValue,
                                     ltEpilogue, biasAddress, auxAddress);
    if (failed(c))
      return failure();
    cAddress = *c;
  }
  bool inPlace = false;
  if (!cAddress) {
    if (epilogueOutputs.size() == 1 &&
        epilogueOutputs.front().getType() == cType) {
      cAddress = epilogueOutputAddresses.front();
      inPlace = true;
    } else {
      // After the memory plan's scratch buffers (scratchLayout()).
      cAddress =
          exec::ScratchOp::create(execBuilder, execModule->getLoc(),
                                  exec::PtrType::get(module.getContext()));
      gemmProductBytes = std::max(gemmProductBytes, *cType.getNumBytes());
    }
  }

  FailureOr<double> beta =
      knownBeta
          ? *knownBeta
          : prepareAccumulator(kernel, description, inPlace, cAddress, cType);
  if (failed(beta))
    return failure();
  if (*beta != 0.0)
    epilogue.clear();

  // cuBLASLt's BGRADA / BGRADB write a bias gradient that reads no C.
  if (fold && epilogue.empty() && ltEpilogue == exec::BlasEpilogue::none)
    biasAddress =
        biasGradientEpilogue(kernel, g, independent, independentOutputs,
                             independentOutputAddresses, ltEpilogue);
  // cuBLASLt folds bias / relu / gelu when C is the epilogue's output and
  // the bias is one packed vector over the GEMM's rows.
  if (fold && inPlace && independent.empty() && *beta == 0.0 &&
      !usesAux(kernel.getEpilogue()) &&
      ltEpilogue == exec::BlasEpilogue::none) {
    FailureOr<std::pair<exec::BlasEpilogue, Value>> folded =
        foldedEpilogue(kernel, g, epilogue, outerValue);
    if (failed(folded))
      return failure();
    std::tie(ltEpilogue, biasAddress) = *folded;
  }

  // The call, with every BLAS parameter decided.
  auto blasOp = [](bool transposed) {
    return transposed ? exec::BlasOp::t : exec::BlasOp::n;
  };
  auto elementOf = [](Value value) {
    return llvm::cast<NamedTensorType>(value.getType()).getElementType();
  };
  auto gemm = exec::GemmOp::create(
      execBuilder, contract.getLoc(), parts.a, parts.b, cAddress, biasAddress,
      auxAddress, description, blasOp(g.transA), blasOp(g.transB), g.m, g.n,
      g.k, g.lda, g.ldb, g.ldc, g.batchCount, g.strideA, g.strideB, g.strideC,
      llvm::APFloat(g.alpha), llvm::APFloat(*beta), elementOf(g.a),
      elementOf(g.b), cType.getElementType(), exec::ComputeType::f32,
      ltEpilogue,
      /*descriptor=*/IntegerAttr());
  // cuBLASLt runs the whole epilogue; where it refuses it at run time, the
  // fallback runs what the C++ target runs: the GEMM, then the epilogue as
  // generated kernels (the same work, with more bytes moved).
  if (ltEpilogue != exec::BlasEpilogue::none) {
    OpBuilder::InsertionGuard guard(execBuilder);
    execBuilder.setInsertionPointToStart(&gemm.getFallback().emplaceBlock());
    return lowerGemmCall(kernel, g, std::move(unfolded), outerValue,
                         /*fold=*/false, *beta);
  }

  // What the library did not fold runs through the shared core.
  bool fallback = knownBeta.has_value();
  return success(
      succeeded(lowerLeftover(kernel, "epilogue", epilogue, epilogueOutputs,
                              epilogueOutputAddresses, cAddress, outerValue,
                              fallback)) &&
      succeeded(lowerLeftover(kernel, "bgrad", independent, independentOutputs,
                              independentOutputAddresses, cAddress, outerValue,
                              fallback)));
}

LogicalResult ModuleEmitter::lowerPhase(GraphOp graph, bool isBackward) {
  Block &body = graph.getBody().front();
  ArrayRef<Field> fields = isBackward ? backwardFields : forwardFields;
  // The phase's statements as sluice_exec IR.
  execBuilder.setInsertionPointToEnd(execModule->getBody());
  auto entry = exec::EntryOp::create(
      execBuilder, graph.getLoc(),
      "sluice_" + name + (isBackward ? "_backward" : "_forward"));
  execBuilder.setInsertionPointToStart(&entry.getBody().emplaceBlock());
  // Boundary arguments.
  for (unsigned i = 0; i < graph.getNumArguments(); ++i) {
    StringRef argName = graph.getArgName(i);
    Value arg = body.getArgument(i);
    if (isBackward && graph.isSavedArg(i)) {
      // The forward's value of the same name: a forward argument or output
      // (read from the args) or an arena buffer kept since the forward.
      std::optional<unsigned> result;
      for (unsigned r = 0; r < forward.getNumResults(); ++r)
        if (forward.getResultName(r) == argName)
          result = r;
      if (!result)
        return graph.emitOpError() << "argument '" << argName
                                   << "' is not a result of the forward graph";
      Value saved = forward.getReturnOp().getOperand(*result);
      saved = resolveView(saved);
      if (packedValues.contains(saved))
        packedValues.insert(arg);
      // Copy before inserting: operator[] may grow the map and move the
      // found entry.
      const ArenaBuffer *buffer = plan->lookup(saved);
      if (!buffer)
        buffer = plan->lookup(arg);
      if (auto it = pointers.find(saved); it != pointers.end()) {
        Value pointer = local(it->second);
        pointers[arg] = pointer;
      } else if (buffer)
        pointers[arg] = regionView(*buffer);
      else
        return graph.emitOpError()
               << "saved tensor '" << argName << "' has no arena buffer";
      continue;
    }
    pointers[arg] = argPointer(argName);
  }
  // Results written straight into their fields where possible.
  SmallVector<std::pair<StringRef, Value>> copies;
  ReturnOp ret = graph.getReturnOp();
  for (unsigned r = 0; r < graph.getNumResults(); ++r) {
    StringRef resultName = graph.getResultName(r);
    if (graph.isSavedResult(r))
      continue;
    Value value = ret.getOperand(r);
    // An accumulated sum is stored where its first term was.
    Value root = resolveStorage(value);
    if (llvm::isa<OpResult>(root) && !pointers.count(root))
      pointers[root] = argPointer(resultName);
    else
      copies.emplace_back(resultName, root);
  }
  (void)fields;

  for (Operation &op : body.without_terminator()) {
    if (auto rename = llvm::dyn_cast<RenameOp>(op)) {
      FailureOr<Value> pointer = addressOf(rename.getInput(), &op);
      if (failed(pointer))
        return failure();
      pointers[rename.getResult()] = *pointer;
      if (packedValues.contains(rename.getInput()))
        packedValues.insert(rename.getResult());
      continue;
    }
    auto kernel = llvm::dyn_cast<KernelOp>(op);
    if (!kernel)
      return op.emitOpError()
             << "is not inside a sluice.kernel; run --sluice-fuse before code "
                "generation";
    // Per-kernel times for sluice_profile: a steady clock on the CPU, a
    // pair of events on the stream for CUDA (no synchronisation here).
    std::vector<std::string> &profiled = profiledKernels[isBackward ? 1 : 0];
    int64_t phase = isBackward ? 1 : 0, slot = profiled.size();
    profiled.push_back(describeKernel(kernel));
    Location loc = kernel.getLoc();
    exec::TimerBeginOp::create(execBuilder, loc, phase, slot);
    if (Value storage = kernel.getAccumulatedStorage()) {
      FailureOr<Value> pointer = addressOf(storage, kernel);
      if (failed(pointer))
        return failure();
      pointers[kernel.getResult(0)] = *pointer;
    }
    if (failed(kernel.getKind() == KernelKind::gemm ? lowerGemm(kernel)
               : kernel.getKind() == KernelKind::streaming
                   ? lowerStreaming(kernel)
                   : lowerFused(kernel)))
      return failure();
    exec::TimerEndOp::create(execBuilder, loc, phase, slot);
  }
  for (auto &[resultName, value] : copies) {
    FailureOr<Value> source = addressOf(value, ret);
    if (failed(source))
      return failure();
    uint64_t bytes =
        *llvm::cast<NamedTensorType>(value.getType()).getNumBytes();
    exec::CopyOp::create(execBuilder, ret.getLoc(), *source,
                         argPointer(resultName), bytes);
  }
  return success();
}

LogicalResult ModuleEmitter::lower() {
  if (failed(collect()))
    return failure();
  if (!plan) {
    FailureOr<MemoryPlan> planned = planMemory(module);
    if (failed(planned))
      return failure();
    ownPlan = std::move(*planned);
    plan = &*ownPlan;
  }
  if (failed(lowerPhase(forward, false)) ||
      (backward && failed(lowerPhase(backward, true))))
    return failure();
  return success(succeeded(target::legalizeForEmission(*execModule)) &&
                 succeeded(mlir::verify(*execModule)));
}

FailureOr<OwningOpRef<ModuleOp>> ModuleEmitter::takeExecModule() {
  if (failed(lower()))
    return failure();
  return std::move(execModule);
}

FailureOr<EmittedModule> ModuleEmitter::run() {
  if (failed(lower()))
    return failure();
  std::string phases;
  llvm::raw_string_ostream ps(phases);
  for (auto [index, entry] :
       llvm::enumerate(execModule->getOps<exec::EntryOp>())) {
    bool isBackward = index == 1;
    printEntryPrologue(ps, isBackward);
    if (failed(printEntry(entry, ps)))
      return failure();
    ps << "  ctx->profiled[" << (isBackward ? 1 : 0)
       << "] = 1;\n  return SLUICE_OK;\n}\n\n";
  }

  EmittedModule result;
  result.moduleName = name;
  result.sourceFile = isCuda() ? fileStem + ".cu" : fileStem + "_cpu.cpp";
  result.headerFile = isCuda() ? fileStem + ".h" : fileStem + "_cpu.h";
  result.files.push_back(EmittedFile{result.sourceFile, source(phases)});
  result.files.push_back(EmittedFile{result.headerFile, header()});
  result.files.push_back({"sluice_runtime.h", kRuntimeHeader});
  result.files.push_back({"sluice_host.h", kHostHeader});
  result.files.push_back({"sluice_kernels.h", kKernelsHeader});
  result.files.push_back({"Philox.h", kPhiloxHeader});
  if (!isCuda())
    result.files.push_back({"sluice_cpu_gemm.h", kCpuGemmHeader});
  if (usesStreaming) {
    result.files.push_back({"sluice_stream.h", kStreamHeader});
    if (isCuda())
      result.files.push_back({"sluice_stream_cuda.cuh", kStreamCudaHeader});
    else
      result.files.push_back({"sluice_stream_cpu.h", kStreamCpuHeader});
  }
  return result;
}

FailureOr<EmittedModule>
mlir::sluice::emitModule(ModuleOp module, EmitTarget target, StringRef name,
                         const MemoryPlan *plan, StringRef cudaArch) {
  return ModuleEmitter(module, target, name, plan, cudaArch).run();
}

FailureOr<OwningOpRef<ModuleOp>>
mlir::sluice::lowerToExec(ModuleOp module, EmitTarget target, StringRef name,
                          const MemoryPlan *plan) {
  return ModuleEmitter(module, target, name, plan).takeExecModule();
}
