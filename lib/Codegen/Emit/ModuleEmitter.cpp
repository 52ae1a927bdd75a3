//===- ModuleEmitter.cpp - the C ABI around the kernels -------------------===//
//
// Walks the forward (and backward) graph after --sluice-fuse: every kernel
// becomes a launch (fused kernels through the shared core, gemm kernels
// through cuBLAS/cuBLASLt or the CPU GEMM plus the core for what cuBLASLt
// does not fold), renames become pointer aliases, and the graph's boundary
// maps onto the args structs of the C ABI. Intermediates live in one arena
// at the MemoryPlan's offsets; saved tensors stay there between the forward
// and the backward.
//
//===----------------------------------------------------------------------===//

#include "EmitInternal.h"

#include "dialects/sluice/SluiceBuilders.h"
#include "dialects/sluice_exec/ExecOps.h"

#include "sluice/Target/Translate.h"

#include "mlir/IR/Verifier.h"

#include "sluice/Codegen/GemmMapping.h"
#include "sluice/Codegen/MemoryPlan.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <climits>
#include <cstdio>

using namespace mlir;
using namespace mlir::sluice;
using namespace mlir::sluice::emit;

namespace mlir::sluice::emit {
extern const char *const kRuntimeHeader;
extern const char *const kHostHeader;
extern const char *const kKernelsHeader;
extern const char *const kCpuGemmHeader;
extern const char *const kPhiloxHeader;
} // namespace mlir::sluice::emit

std::string mlir::sluice::sanitizeModuleName(StringRef name) {
  std::string out;
  for (char c : name)
    out += (llvm::isAlnum(c) || c == '_') ? c : '_';
  return out;
}

std::string mlir::sluice::moduleFileStem(StringRef name) {
  bool plain = !name.empty() && name.front() != '.' && name.front() != '-' &&
               llvm::all_of(name, [](char c) {
                 return llvm::isAlnum(c) || c == '_' || c == '-' || c == '.';
               });
  return plain ? name.str() : sanitizeModuleName(name);
}

StringRef mlir::sluice::defaultModuleName(ModuleOp module) {
  if (auto spec = module->getAttrOfType<StringAttr>("sluice.spec"))
    return spec.getValue();
  for (GraphOp graph : module.getOps<GraphOp>())
    if (graph.getPhase() == Phase::forward) {
      StringRef name = graph.getSymName();
      name.consume_back("_forward");
      return name;
    }
  return "module";
}

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

namespace {
/// One field of an args struct: a boundary tensor.
struct Field {
  std::string name, ident;
  NamedTensorType type;
  bool output = false;
};

int dtypeCode(Type element) {
  return element.isF16() ? 1 : element.isBF16() ? 2 : 0;
}
std::string cudaDataType(Type element) {
  return element.isF16()    ? "CUDA_R_16F"
         : element.isBF16() ? "CUDA_R_16BF"
                            : "CUDA_R_32F";
}

class ModuleEmitter {
public:
  ModuleEmitter(ModuleOp module, EmitTarget target, StringRef name)
      : module(module), target(target), name(sanitizeModuleName(name)),
        fileStem(moduleFileStem(name)), execBuilder(module.getContext()) {
    module.getContext()->getOrLoadDialect<exec::ExecDialect>();
    execModule = ModuleOp::create(module.getLoc());
  }
  FailureOr<EmittedModule> run();

private:
  bool isCuda() const { return target == EmitTarget::Cuda; }
  LogicalResult collect();
  LogicalResult emitPhase(GraphOp graph, bool backward, llvm::raw_ostream &os);
  LogicalResult emitFused(KernelOp kernel, llvm::raw_ostream &os);
  LogicalResult emitGemm(KernelOp kernel, llvm::raw_ostream &os);
  LogicalResult emitLeftover(KernelOp kernel, StringRef what,
                             ArrayRef<Operation *> ops, ArrayRef<Value> outputs,
                             ArrayRef<std::string> outputPointers,
                             StringRef cPointer,
                             function_ref<Value(Value)> outerValue,
                             llvm::raw_ostream &os);
  FailureOr<std::pair<exec::BlasEpilogue, Value>>
  foldedEpilogue(KernelOp kernel, const GemmMapping &g,
                 ArrayRef<Operation *> epilogue,
                 function_ref<Value(Value)> outerValue);
  /// The sluice_exec pointer of a top-level value (an arena view is made
  /// on first use), or failure with a diagnostic.
  FailureOr<Value> addressOf(Value value, Operation *user);
  /// The C expression of addressOf(value, user).
  FailureOr<std::string> pointerOf(Value value, Operation *user);
  /// A boundary tensor's field of the args struct.
  Value argPointer(StringRef canonicalName);
  /// Prints `op` with the target's printer into the statements of `os`.
  LogicalResult print(Operation *op, llvm::raw_ostream &os);
  std::string header() const;
  std::string source(StringRef phases) const;
  std::string fieldsOf(ArrayRef<Field> fields, bool inputsConst) const;

  ModuleOp module;
  EmitTarget target;
  std::string name;
  /// The stem of the emitted file names.
  std::string fileStem;
  MemoryPlan plan;
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
  unsigned kernelCount = 0, ltCount = 0;
  /// Per phase, the description of every top-level kernel in launch order
  /// (the rows of sluice_profile).
  std::vector<std::string> profiledKernels[2];
  uint64_t scratchBytes = 0;
};
} // namespace

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
    if (!forward.getResultName(i).starts_with("saved."))
      forwardFields.push_back(
          field(forward.getResultName(i), forward.getResultTypes()[i], true));
  if (backward) {
    for (Field f : forwardFields) {
      f.output = false;
      backwardFields.push_back(f);
    }
    for (unsigned i = 0; i < backward.getNumArguments(); ++i)
      if (!backward.getArgName(i).starts_with("saved."))
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
                             identifier(canonicalName));
}

LogicalResult ModuleEmitter::print(Operation *op, llvm::raw_ostream &os) {
  if (failed(isCuda() ? target::printCudaOperation(printer, op)
                      : target::printCppOperation(printer, op)))
    return failure();
  os << printer.takeBody();
  return success();
}

FailureOr<Value> ModuleEmitter::addressOf(Value value, Operation *user) {
  if (auto it = pointers.find(value); it != pointers.end())
    return it->second;
  if (const ArenaBuffer *buffer = plan.lookup(value)) {
    Value pointer = exec::ArenaOp::create(
        execBuilder, execModule->getLoc(),
        exec::PtrType::get(module.getContext()), buffer->offset);
    pointers[value] = pointer;
    return pointer;
  }
  return user->emitOpError()
         << "reads or writes a tensor that has neither a boundary field nor "
            "an arena buffer in the memory plan";
}

LogicalResult ModuleEmitter::emitFused(KernelOp kernel, llvm::raw_ostream &os) {
  SmallVector<Operation *> ops;
  for (Operation &op : kernel.getBlock().without_terminator()) {
    // A rename of an input is a view: it reads the input's memory.
    if (auto rename = llvm::dyn_cast<RenameOp>(op))
      if (llvm::isa<BlockArgument>(rename.getInput()))
        continue;
    ops.push_back(&op);
  }
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
  SmallVector<std::string> inputs, outputs;
  for (auto [index, input] : llvm::enumerate(group->inputs)) {
    input = resolveView(input);
    auto arg = llvm::cast<BlockArgument>(input);
    Value outer = kernel.getInputs()[arg.getArgNumber()];
    FailureOr<std::string> pointer = pointerOf(outer, kernel);
    if (failed(pointer))
      return failure();
    inputs.push_back(*pointer);
    group->inputPacked[index] = packedValues.contains(outer);
  }
  for (auto [index, result] : llvm::enumerate(kernel.getResults())) {
    FailureOr<std::string> pointer = pointerOf(result, kernel);
    if (failed(pointer))
      return failure();
    outputs.push_back(*pointer);
    group->outputPacked[index] = kernel.isPacked(index);
    if (kernel.isPacked(index))
      packedValues.insert(result);
  }
  if (failed(emitFusedKernel(*group, target, kernels)))
    return failure();
  os << "  // " << description << "\n";
  emitFusedLaunch(*group, target, inputs, outputs, os);
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
  StringRef epilogueName = kernel.getEpilogue().value_or("");
  Value bias;
  if (epilogueName.starts_with("bias") && others.size() == 1) {
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
  if (others.empty())
    return epilogueName == "relu"   ? std::make_pair(BlasEpilogue::relu, Value())
           : epilogueName == "gelu" ? std::make_pair(BlasEpilogue::gelu, Value())
                                    : none;
  if (!bias)
    return none;
  if (epilogueName == "bias")
    return std::make_pair(BlasEpilogue::bias, bias);
  if (epilogueName == "bias_relu")
    return std::make_pair(BlasEpilogue::bias_relu, bias);
  if (epilogueName == "bias_gelu")
    return std::make_pair(BlasEpilogue::bias_gelu, bias);
  return none;
}

/// Runs the ops `ops` of gemm kernel `kernel` that the BLAS did not fold
/// (`what`: "epilogue" or "bgrad") as a generated kernel storing `outputs`
/// at `outputPointers`; the product is read at `cPointer`.
LogicalResult ModuleEmitter::emitLeftover(
    KernelOp kernel, StringRef what, ArrayRef<Operation *> ops,
    ArrayRef<Value> outputs, ArrayRef<std::string> outputPointers,
    StringRef cPointer, function_ref<Value(Value)> outerValue,
    llvm::raw_ostream &os) {
  if (ops.empty())
    return success();
  std::string fn = "sluice_kernel_" + std::to_string(kernelCount++);
  if (auto label = kernel->getAttrOfType<StringAttr>("sluice.name"))
    fn += "_" + identifier(label.getValue());
  fn += "_" + what.str();
  FailureOr<FusedGroup> group = makeFusedGroup(
      fn, describeKernel(kernel) + " " + what.str(), ops, outputs);
  if (failed(group))
    return failure();
  SmallVector<std::string> inputs;
  for (Value input : group->inputs) {
    if (input == kernel.getContraction().getResult()) {
      inputs.push_back(cPointer.str());
      continue;
    }
    Value outer = outerValue(input);
    if (!outer)
      return kernel.emitOpError() << "epilogue reads a value it cannot "
                                     "address";
    FailureOr<std::string> pointer = pointerOf(outer, kernel);
    if (failed(pointer))
      return failure();
    inputs.push_back(*pointer);
    group->inputPacked[inputs.size() - 1] = packedValues.contains(outer);
  }
  if (failed(emitFusedKernel(*group, target, kernels)))
    return failure();
  emitFusedLaunch(*group, target, inputs, outputPointers, os);
  return success();
}

LogicalResult ModuleEmitter::emitGemm(KernelOp kernel, llvm::raw_ostream &os) {
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
  Block &block = kernel.getBlock();
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
  llvm::SetVector<Operation *> epilogueOps;
  SmallVector<Operation *> epilogue, independent;
  for (Operation &op : block.without_terminator()) {
    if (&op == contract.getOperation())
      continue;
    if (auto rename = llvm::dyn_cast<RenameOp>(op))
      if (outerValue(rename.getResult()))
        continue; // a view of an input
    bool readsC = llvm::any_of(op.getOperands(), [&](Value operand) {
      return operand == contract.getResult() ||
             epilogueOps.contains(operand.getDefiningOp());
    });
    if (readsC) {
      epilogueOps.insert(&op);
      epilogue.push_back(&op);
    } else {
      independent.push_back(&op);
    }
  }
  ValueRange yielded = kernel.getYield().getOperands();
  SmallVector<Value> epilogueOutputs, independentOutputs;
  SmallVector<std::string> epilogueOutputPointers, independentOutputPointers;
  SmallVector<Value> epilogueOutputAddresses;
  std::optional<std::string> cPointer;
  Value cAddress;
  for (auto [index, value] : llvm::enumerate(yielded)) {
    if (kernel.isPacked(index))
      return kernel.emitOpError()
             << "result #" << index << " of " << description
             << " is bit-packed; code generation stores masks unpacked (fuse "
                "without packing)";
    FailureOr<Value> address = addressOf(kernel.getResult(index), kernel);
    if (failed(address))
      return failure();
    FailureOr<std::string> pointer = target::HostEmitter::pointer(*address);
    if (failed(pointer))
      return failure();
    if (value == contract.getResult()) {
      if (!cPointer) {
        cPointer = *pointer;
        cAddress = *address;
      } else
        return kernel.emitOpError()
               << "yields its contraction twice; not supported";
      continue;
    }
    bool inEpilogue = epilogueOps.contains(value.getDefiningOp());
    (inEpilogue ? epilogueOutputs : independentOutputs).push_back(value);
    (inEpilogue ? epilogueOutputPointers : independentOutputPointers)
        .push_back(*pointer);
    if (inEpilogue)
      epilogueOutputAddresses.push_back(*address);
  }
  NamedTensorType cType = contract.getResult().getType();
  bool inPlace = false;
  if (!cPointer) {
    if (epilogueOutputs.size() == 1 &&
        epilogueOutputs.front().getType() == cType) {
      cPointer = epilogueOutputPointers.front();
      cAddress = epilogueOutputAddresses.front();
      inPlace = true;
    } else {
      cAddress = exec::ScratchOp::create(
          execBuilder, execModule->getLoc(),
          exec::PtrType::get(module.getContext()));
      cPointer = "ctx->scratch";
      scratchBytes = std::max(scratchBytes, *cType.getNumBytes());
    }
  }

  // cuBLASLt folds bias / relu / gelu when C is the epilogue's output and
  // the bias is one packed vector over the GEMM's rows.
  exec::BlasEpilogue ltEpilogue = exec::BlasEpilogue::none;
  Value biasAddress;
  if (isCuda() && inPlace && independent.empty()) {
    FailureOr<std::pair<exec::BlasEpilogue, Value>> folded =
        foldedEpilogue(kernel, g, epilogue, outerValue);
    if (failed(folded))
      return failure();
    std::tie(ltEpilogue, biasAddress) = *folded;
  }

  // The call, with every BLAS parameter decided.
  std::optional<int64_t> descriptor;
  if (ltEpilogue != exec::BlasEpilogue::none)
    descriptor = ltCount++;
  auto blasOp = [](bool transposed) {
    return transposed ? exec::BlasOp::t : exec::BlasOp::n;
  };
  auto elementOf = [](Value value) {
    return llvm::cast<NamedTensorType>(value.getType()).getElementType();
  };
  auto gemm = exec::GemmOp::create(
      execBuilder, contract.getLoc(), *aAddress, *bAddress, cAddress,
      biasAddress, description, blasOp(g.transA), blasOp(g.transB), g.m, g.n,
      g.k, g.lda, g.ldb, g.ldc, g.batchCount, g.strideA, g.strideB, g.strideC,
      llvm::APFloat(g.alpha), elementOf(g.a), elementOf(g.b),
      cType.getElementType(), exec::ComputeType::f32, ltEpilogue,
      descriptor ? execBuilder.getI64IntegerAttr(*descriptor) : IntegerAttr());
  if (failed(mlir::verify(gemm)) || failed(print(gemm, os)))
    return failure();
  // cuBLASLt ran the whole epilogue.
  if (ltEpilogue != exec::BlasEpilogue::none)
    return success();

  // What the library did not fold runs through the shared core.
  auto runGroup = [&](ArrayRef<Operation *> ops, ArrayRef<Value> outputs,
                      ArrayRef<std::string> outputPointers,
                      StringRef what) -> LogicalResult {
    return emitLeftover(kernel, what, ops, outputs, outputPointers, *cPointer,
                        outerValue, os);
  };
  if (failed(runGroup(epilogue, epilogueOutputs, epilogueOutputPointers,
                      "epilogue")) ||
      failed(runGroup(independent, independentOutputs,
                      independentOutputPointers, "bgrad")))
    return failure();
  return success();
}

LogicalResult ModuleEmitter::emitPhase(GraphOp graph, bool isBackward,
                                       llvm::raw_ostream &os) {
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
    if (isBackward && argName.starts_with("saved.")) {
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
      const ArenaBuffer *buffer = plan.lookup(saved);
      if (!buffer)
        buffer = plan.lookup(arg);
      if (auto it = pointers.find(saved); it != pointers.end()) {
        Value pointer = it->second;
        pointers[arg] = pointer;
      } else if (buffer)
        pointers[arg] = exec::ArenaOp::create(
            execBuilder, execModule->getLoc(),
            exec::PtrType::get(module.getContext()), buffer->offset);
      else
        return graph.emitOpError()
               << "saved tensor '" << argName << "' has no arena buffer";
      continue;
    }
    pointers[arg] = argPointer(argName);
  }
  // Results written straight into their fields where possible.
  SmallVector<std::pair<std::string, Value>> copies;
  ReturnOp ret = graph.getReturnOp();
  for (unsigned r = 0; r < graph.getNumResults(); ++r) {
    StringRef resultName = graph.getResultName(r);
    if (resultName.starts_with("saved."))
      continue;
    Value value = ret.getOperand(r);
    Value root = value;
    root = resolveView(root);
    std::string field = "args->" + identifier(resultName);
    if (llvm::isa<OpResult>(root) && !pointers.count(root))
      pointers[root] = argPointer(resultName);
    else
      copies.emplace_back(field, root);
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
    std::string slot = std::to_string(isBackward ? 1 : 0) + ", " +
                       std::to_string(profiled.size());
    profiled.push_back(describeKernel(kernel));
    os << "  SLUICE_PROFILE_BEGIN(" << slot << ");\n";
    if (failed(kernel.getKind() == KernelKind::gemm ? emitGemm(kernel, os)
                                                    : emitFused(kernel, os)))
      return failure();
    os << "  SLUICE_PROFILE_END(" << slot << ");\n";
  }
  for (auto &[field, value] : copies) {
    FailureOr<std::string> source = pointerOf(value, ret);
    if (failed(source))
      return failure();
    uint64_t bytes =
        *llvm::cast<NamedTensorType>(value.getType()).getNumBytes();
    if (isCuda())
      os << "  SLUICE_CHECK_CUDA(cudaMemcpyAsync((void *)" << field
         << ", (const void *)(" << *source << "), " << bytes
         << "ULL, cudaMemcpyDeviceToDevice, stream), \"copy into " << field
         << "\");\n";
    else
      os << "  memcpy((void *)" << field << ", (const void *)(" << *source
         << "), " << bytes << "ULL);\n";
  }
  return success();
}

std::string ModuleEmitter::fieldsOf(ArrayRef<Field> fields,
                                    bool inputsConst) const {
  std::string text;
  for (const Field &f : fields)
    text += std::string("  ") + (f.output || !inputsConst ? "" : "const ") +
            "void *" + f.ident + "; /* " + f.name + " */\n";
  return text;
}

std::string ModuleEmitter::header() const {
  std::string guard =
      "SLUICE_MODULE_" + StringRef(name).upper() + (isCuda() ? "_H" : "_CPU_H");
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "/* Generated by sluicec: the C ABI of module '" << name << "' ("
     << (isCuda() ? "CUDA" : "portable C++") << "). docs/Codegen.md. */\n"
     << "#ifndef " << guard << "\n#define " << guard << "\n\n";
  if (isCuda())
    os << "#define SLUICE_RUNTIME_CUDA 1\n";
  os << "#include <stdint.h>\n#include \"sluice_runtime.h\"\n\n"
     << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
     << "typedef struct sluice_" << name << "_context sluice_" << name
     << "_context;\n"
     << "/* Allocates the arena and library handles. On failure *ctx is NULL "
        "or a context whose last_error says why (destroy it). */\n"
     << "int sluice_" << name << "_create(sluice_" << name
     << "_context **ctx);\n"
     << "void sluice_" << name << "_destroy(sluice_" << name
     << "_context *ctx);\n"
     << "const char *sluice_" << name << "_last_error(const sluice_" << name
     << "_context *ctx);\n\n"
     << "typedef struct {\n"
     << fieldsOf(forwardFields, true) << "  uint64_t seed;\n} sluice_" << name
     << "_forward_args;\n"
     << "int sluice_" << name << "_forward(sluice_" << name
     << "_context *ctx, const sluice_" << name
     << "_forward_args *args, sluice_stream_t stream);\n";
  if (backward)
    os << "\n/* One forward, then its backward, per context: the saved "
          "tensors stay in the context's arena between them. */\n"
       << "typedef struct {\n"
       << fieldsOf(backwardFields, true) << "  uint64_t seed;\n} sluice_"
       << name << "_backward_args;\n"
       << "int sluice_" << name << "_backward(sluice_" << name
       << "_context *ctx, const sluice_" << name
       << "_backward_args *args, sluice_stream_t stream);\n";
  os << "\n/* Generic entry points, for runners that dlopen the module. */\n"
     << "const char *sluice_module_name(void);\n"
     << "int sluice_num_phases(void);\n"
     << "int sluice_num_tensors(int phase);\n"
     << "const sluice_tensor_info *sluice_tensor(int phase, int index);\n"
     << "int sluice_create(void **ctx);\n"
     << "void sluice_destroy(void *ctx);\n"
     << "const char *sluice_last_error(const void *ctx);\n"
     << "int sluice_run(void *ctx, int phase, void *const *tensors, uint64_t "
        "seed, sluice_stream_t stream);\n"
     << "/* Only in a module compiled with -DSLUICE_PROFILE: per-kernel times "
        "(ms) of the\n   last run of `phase` on `ctx` (CUDA: events around "
        "each "
        "kernel; CPU: a steady\n   clock); fills at most `capacity` entries, "
        "returns the number of kernels, or -1\n   before any run. */\n"
     << "int sluice_profile(const void *ctx, int phase, int capacity, const "
        "char **names,\n                   double *milliseconds);\n\n"
     << "#ifdef __cplusplus\n}\n#endif\n\n#endif\n";
  return text;
}

std::string ModuleEmitter::source(StringRef phases) const {
  std::string text;
  llvm::raw_string_ostream os(text);
  std::string ctxType = "sluice_" + name + "_context";
  uint64_t arenaBytes = plan.peakBytes;
  os << "// Generated by sluicec: module '" << name << "' for "
     << (isCuda() ? "CUDA (nvcc -shared -Xcompiler -fPIC ... -lcublasLt "
                    "-lcublas)"
                  : "the host C++ compiler (c++ -O2 -shared -fPIC "
                    "[-fopenmp] [-DSLUICE_HAVE_CBLAS -lopenblas])")
     << ".\n"
     << "#include \"" << (isCuda() ? fileStem + ".h" : fileStem + "_cpu.h")
     << "\"\n"
     << "#include \"Philox.h\"\n#include \"sluice_host.h\"\n"
     << "#include \"sluice_kernels.h\"\n";
  if (isCuda())
    os << "#include <cublasLt.h>\n#include <cublas_v2.h>\n"
          "#include <cuda_runtime.h>\n";
  else
    os << "#include \"sluice_cpu_gemm.h\"\n";
  os << "#include <stdarg.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
        "#include <string.h>\n\n";
  os << "struct " << ctxType << " {\n  char *arena;\n  char *scratch;\n";
  if (isCuda())
    os << "  cublasHandle_t blas;\n  cublasLtHandle_t lt;\n"
          "  void *workspace;\n  size_t workspace_bytes;\n"
       << printer.contextText();
  size_t slots = std::max<size_t>(
      {profiledKernels[0].size(), profiledKernels[1].size(), size_t(1)});
  if (isCuda())
    os << "  cudaEvent_t events[2][" << 2 * slots << "];\n";
  else
    os << "  double profile_ms[2][" << slots << "];\n";
  os << "  int profiled[2];\n";
  os << "  char error[1024];\n};\n\n"
     << "static char sluice_create_error[256];\n\n"
     << "static int sluice_fail(" << ctxType
     << " *ctx, int status, const char *format, ...) {\n"
        "  va_list list;\n  va_start(list, format);\n"
        "  vsnprintf(ctx->error, sizeof(ctx->error), format, list);\n"
        "  va_end(list);\n  return status;\n}\n\n";
  os << kernelText;

  // create / destroy / last_error.
  os << "extern \"C\" void sluice_" << name << "_destroy(" << ctxType
     << " *ctx) {\n  if (!ctx)\n    return;\n";
  if (isCuda())
    os << printer.destroyText()
       << "  for (int p = 0; p < 2; ++p)\n    for (int i = 0; i < " << 2 * slots
       << "; ++i)\n      if (ctx->events[p][i]) "
          "cudaEventDestroy(ctx->events[p][i]);\n"
       << "  if (ctx->lt) cublasLtDestroy(ctx->lt);\n"
          "  if (ctx->blas) cublasDestroy(ctx->blas);\n"
          "  cudaFree(ctx->workspace);\n  cudaFree(ctx->scratch);\n"
          "  cudaFree(ctx->arena);\n";
  else
    os << "  free(ctx->scratch);\n  free(ctx->arena);\n";
  os << "  free(ctx);\n}\n\n";
  os << "extern \"C\" int sluice_" << name << "_create(" << ctxType
     << " **out) {\n  const char *phase = \"sluice_" << name
     << "_create\";\n  if (!out)\n    return SLUICE_ERROR_ARGUMENT;\n"
     << "  " << ctxType << " *ctx = (" << ctxType << " *)calloc(1, sizeof("
     << ctxType << "));\n  *out = ctx;\n"
     << "  if (!ctx) {\n    snprintf(sluice_create_error, "
        "sizeof(sluice_create_error), \"%s: cannot allocate the context\", "
        "phase);\n    return SLUICE_ERROR_ALLOC;\n  }\n";
  if (isCuda()) {
    os << "  cudaError_t e;\n";
    auto alloc = [&](StringRef field, uint64_t bytes) {
      if (!bytes)
        return;
      os << "  e = cudaMalloc((void **)&ctx->" << field << ", " << bytes
         << "ULL);\n  if (e != cudaSuccess)\n    return sluice_fail(ctx, "
            "SLUICE_ERROR_ALLOC, \"%s: cudaMalloc of the "
         << field << " (" << bytes << " bytes): %s\", phase, "
         << "cudaGetErrorString(e));\n";
    };
    alloc("arena", arenaBytes);
    alloc("scratch", scratchBytes);
    os << "  ctx->workspace_bytes = 32u << 20;\n";
    alloc("workspace", 32u << 20);
    os << "  SLUICE_CHECK_CUBLAS(cublasCreate(&ctx->blas), "
          "\"cublasCreate\");\n"
          "  SLUICE_CHECK_CUBLAS(cublasLtCreate(&ctx->lt), "
          "\"cublasLtCreate\");\n"
       << printer.createText()
       << "  for (int p = 0; p < 2; ++p)\n    for (int i = 0; i < " << 2 * slots
       << "; ++i) {\n      e = cudaEventCreate(&ctx->events[p][i]);\n"
          "      if (e != cudaSuccess)\n        return sluice_fail(ctx, "
          "SLUICE_ERROR_CUDA, \"%s: cudaEventCreate: %s\", phase, "
          "cudaGetErrorString(e));\n    }\n";
  } else {
    auto alloc = [&](StringRef field, uint64_t bytes) {
      if (!bytes)
        return;
      uint64_t rounded = (bytes + 255) / 256 * 256;
      os << "  ctx->" << field << " = (char *)aligned_alloc(256, " << rounded
         << "ULL);\n  if (!ctx->" << field
         << ")\n    return sluice_fail(ctx, SLUICE_ERROR_ALLOC, \"%s: cannot "
            "allocate the "
         << field << " (" << rounded << " bytes)\", phase);\n";
    };
    alloc("arena", arenaBytes);
    alloc("scratch", scratchBytes);
  }
  os << "  (void)phase;\n  return SLUICE_OK;\n}\n\n";
  os << "extern \"C\" const char *sluice_" << name << "_last_error(const "
     << ctxType
     << " *ctx) {\n  return ctx ? ctx->error : "
        "sluice_create_error;\n}\n\n";
  os << phases;

  // The generic entry points.
  os << "extern \"C\" const char *sluice_module_name(void) { return \"" << name
     << "\"; }\n"
     << "extern \"C\" int sluice_num_phases(void) { return "
     << (backward ? 2 : 1) << "; }\n";
  auto table = [&](ArrayRef<Field> fields, int phase) {
    for (auto [index, f] : llvm::enumerate(fields)) {
      if (f.type.getRank() == 0)
        continue;
      os << "static const int64_t sluice_dims_" << phase << "_" << index
         << "[] = {";
      for (auto [i, size] : llvm::enumerate(f.type.getSizes()))
        os << (i ? ", " : "") << size << "LL";
      os << "};\n";
    }
    os << "static const sluice_tensor_info sluice_tensors_" << phase
       << "[] = {\n";
    for (auto [index, f] : llvm::enumerate(fields))
      os << "  {\"" << f.name << "\", " << dtypeCode(f.type.getElementType())
         << ", " << f.type.getRank() << ", "
         << (f.type.getRank() ? "sluice_dims_" + std::to_string(phase) + "_" +
                                    std::to_string(index)
                              : std::string("NULL"))
         << ", " << (f.output ? 1 : 0) << "},\n";
    os << "};\n";
  };
  table(forwardFields, 0);
  if (backward)
    table(backwardFields, 1);
  os << "extern \"C\" int sluice_num_tensors(int phase) {\n"
     << "  if (phase == 0) return " << forwardFields.size() << ";\n";
  if (backward)
    os << "  if (phase == 1) return " << backwardFields.size() << ";\n";
  os << "  return 0;\n}\n"
     << "extern \"C\" const sluice_tensor_info *sluice_tensor(int phase, int "
        "index) {\n"
     << "  if (phase == 0 && index >= 0 && index < " << forwardFields.size()
     << ") return &sluice_tensors_0[index];\n";
  if (backward)
    os << "  if (phase == 1 && index >= 0 && index < " << backwardFields.size()
       << ") return &sluice_tensors_1[index];\n";
  os << "  return NULL;\n}\n"
     << "extern \"C\" int sluice_create(void **ctx) { return sluice_" << name
     << "_create((" << ctxType << " **)ctx); }\n"
     << "extern \"C\" void sluice_destroy(void *ctx) { sluice_" << name
     << "_destroy((" << ctxType << " *)ctx); }\n"
     << "extern \"C\" const char *sluice_last_error(const void *ctx) { return "
        "sluice_"
     << name << "_last_error((const " << ctxType << " *)ctx); }\n"
     << "extern \"C\" int sluice_run(void *opaque, int phase, void *const "
        "*tensors, uint64_t seed, sluice_stream_t stream) {\n"
     << "  " << ctxType << " *ctx = (" << ctxType << " *)opaque;\n"
     << "  if (!ctx)\n    return SLUICE_ERROR_ARGUMENT;\n"
     << "  if (!tensors)\n    return sluice_fail(ctx, SLUICE_ERROR_ARGUMENT, "
        "\"sluice_run: tensors is NULL\");\n";
  auto dispatch = [&](ArrayRef<Field> fields, int phase, StringRef entry) {
    os << "  if (phase == " << phase << ") {\n    sluice_" << name << "_"
       << entry << "_args args;\n";
    for (auto [index, f] : llvm::enumerate(fields))
      os << "    args." << f.ident << " = tensors[" << index << "];\n";
    os << "    args.seed = seed;\n    return sluice_" << name << "_" << entry
       << "(ctx, &args, stream);\n  }\n";
  };
  dispatch(forwardFields, 0, "forward");
  if (backward)
    dispatch(backwardFields, 1, "backward");
  os << "  return sluice_fail(ctx, SLUICE_ERROR_ARGUMENT, \"sluice_run: phase "
        "%d is not one of this module's "
     << (backward ? 2 : 1) << " phases\", phase);\n}\n";
  // sluice_profile: the times of the last run of a phase, per kernel.
  os << "#ifdef SLUICE_PROFILE\n";
  for (int phase = 0; phase < 2; ++phase) {
    os << "static const char *const sluice_kernel_names_" << phase << "[] = {";
    for (const std::string &label : profiledKernels[phase])
      os << "\n  \"" << label << "\",";
    os << "\n  \"\"};\n";
  }
  os << "extern \"C\" int sluice_profile(const void *opaque, int phase, int "
        "capacity, const char **names, double *milliseconds) {\n"
     << "  const " << ctxType << " *ctx = (const " << ctxType << " *)opaque;\n"
     << "  if (!ctx || phase < 0 || phase >= " << (backward ? 2 : 1)
     << " || !ctx->profiled[phase])\n    return -1;\n"
     << "  const char *const *table = phase == 0 ? sluice_kernel_names_0 : "
        "sluice_kernel_names_1;\n"
     << "  int count = phase == 0 ? " << profiledKernels[0].size() << " : "
     << profiledKernels[1].size() << ";\n"
     << "  for (int i = 0; i < count && i < capacity; ++i) {\n"
        "    if (names)\n      names[i] = table[i];\n"
        "    if (!milliseconds)\n      continue;\n";
  if (isCuda())
    os << "    float ms = 0.0f;\n"
          "    if (cudaEventSynchronize(ctx->events[phase][2 * i + 1]) != "
          "cudaSuccess ||\n        cudaEventElapsedTime(&ms, "
          "ctx->events[phase][2 * i], ctx->events[phase][2 * i + 1]) != "
          "cudaSuccess)\n      return -1;\n"
          "    milliseconds[i] = ms;\n";
  else
    os << "    milliseconds[i] = ctx->profile_ms[phase][i];\n";
  os << "  }\n  return count;\n}\n#endif\n";
  return text;
}

FailureOr<EmittedModule> ModuleEmitter::run() {
  if (failed(collect()))
    return failure();
  FailureOr<MemoryPlan> planned = planMemory(module);
  if (failed(planned))
    return failure();
  plan = std::move(*planned);

  std::string phases;
  llvm::raw_string_ostream ps(phases);
  auto entry = [&](GraphOp graph, bool isBackward) -> LogicalResult {
    StringRef which = isBackward ? "backward" : "forward";
    ArrayRef<Field> fields = isBackward ? backwardFields : forwardFields;
    std::string fn = "sluice_" + name + "_" + which.str();
    ps << "extern \"C\" int " << fn << "(sluice_" << name
       << "_context *ctx, const sluice_" << name << "_" << which
       << "_args *args, sluice_stream_t stream_) {\n"
       << "  const char *phase = \"" << fn << "\";\n"
       << "  if (!ctx)\n    return SLUICE_ERROR_ARGUMENT;\n"
       << "  if (!args)\n    return sluice_fail(ctx, SLUICE_ERROR_ARGUMENT, "
          "\"%s: args is NULL\", phase);\n";
    for (const Field &f : fields)
      ps << "  if (!args->" << f.ident
         << ")\n    return sluice_fail(ctx, SLUICE_ERROR_ARGUMENT, \"%s: "
            "tensor '"
         << f.name << "' (args->" << f.ident << ") is NULL\", phase);\n";
    if (isCuda())
      ps << "  cudaStream_t stream = (cudaStream_t)stream_;\n";
    else
      ps << "  (void)stream_;\n";
    if (failed(emitPhase(graph, isBackward, ps)))
      return failure();
    ps << "  ctx->profiled[" << (isBackward ? 1 : 0)
       << "] = 1;\n  return SLUICE_OK;\n}\n\n";
    return success();
  };
  if (failed(entry(forward, false)) ||
      (backward && failed(entry(backward, true))))
    return failure();

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
  return result;
}

FailureOr<EmittedModule>
mlir::sluice::emitModule(ModuleOp module, EmitTarget target, StringRef name) {
  return ModuleEmitter(module, target, name).run();
}
