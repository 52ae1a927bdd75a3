//===- ExecDialect.td - the emission-level dialect ---------*- tablegen -*-===//
//
// `sluice_exec` sits between the fused `sluice` graph and printed source:
// every decision code generation makes (where a tensor lives, how a
// contraction calls the BLAS, what the library folds) is a typed op or
// attribute here, so the printers in lib/Target only print.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_EXEC_DIALECT_TD
#define SLUICE_EXEC_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Exec_Dialect : Dialect {
  let name = "sluice_exec";
  let cppNamespace = "::mlir::sluice::exec";
  let summary = "Emission-level IR: buffers, BLAS calls and launches as typed ops";
  let description = [{
    What a compiled Sluice module does, with every decision made: pointers
    into the caller's tensors and the arena (at the memory plan's offsets),
    GEMM calls with their BLAS parameters and the epilogue the library
    folds. `lib/Target/Cuda` and `lib/Target/Cpp` print it;
    docs/Codegen.md ("Emission IR") describes the ops.
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
}

class Exec_Op<string mnemonic, list<Trait> traits = []>
    : Op<Exec_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

def Exec_PtrType : TypeDef<Exec_Dialect, "Ptr"> {
  let mnemonic = "ptr";
  let summary = "the address of a tensor's bytes (device memory on CUDA)";
}

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Exec_BlasOp : I32EnumAttr<"BlasOp", "whether the BLAS reads an operand transposed", [
    I32EnumAttrCase<"n", 0>,
    I32EnumAttrCase<"t", 1>]> {
  let cppNamespace = "::mlir::sluice::exec";
  let genSpecializedAttr = 0;
}
def Exec_BlasOpAttr : EnumAttr<Exec_Dialect, Exec_BlasOp, "blas_op"> {
  let assemblyFormat = "`<` $value `>`";
}

def Exec_BlasEpilogue : I32EnumAttr<"BlasEpilogue",
    "what the BLAS library applies to C = alpha op(A) op(B) before storing it", [
    I32EnumAttrCase<"none", 0>,
    I32EnumAttrCase<"relu", 1>,
    I32EnumAttrCase<"gelu", 2>,
    I32EnumAttrCase<"bias", 3>,
    I32EnumAttrCase<"bias_relu", 4>,
    I32EnumAttrCase<"bias_gelu", 5>,
    I32EnumAttrCase<"bias_gelu_aux", 6>,
    I32EnumAttrCase<"dgelu", 7>,
    I32EnumAttrCase<"dgelu_bgrad", 8>,
    I32EnumAttrCase<"bgrada", 9>,
    I32EnumAttrCase<"bgradb", 10>]> {
  let cppNamespace = "::mlir::sluice::exec";
  let genSpecializedAttr = 0;
}
def Exec_BlasEpilogueAttr : EnumAttr<Exec_Dialect, Exec_BlasEpilogue, "epilogue"> {
  let assemblyFormat = "`<` $value `>`";
}

def Exec_ComputeType : I32EnumAttr<"ComputeType", "the precision a GEMM accumulates in", [
    I32EnumAttrCase<"f32", 0>]> {
  let cppNamespace = "::mlir::sluice::exec";
  let genSpecializedAttr = 0;
}
def Exec_ComputeTypeAttr : EnumAttr<Exec_Dialect, Exec_ComputeType, "compute"> {
  let assemblyFormat = "`<` $value `>`";
}

def Exec_ScheduleMode : I32EnumAttr<"ScheduleMode", "how a kernel's iteration space spreads over the grid", [
    I32EnumAttrCase<"elementwise", 0>,
    I32EnumAttrCase<"row_block", 1>,
    I32EnumAttrCase<"column_block", 2>]> {
  let cppNamespace = "::mlir::sluice::exec";
  let genSpecializedAttr = 0;
}

def Exec_ReductionStrategy : I32EnumAttr<"ReductionStrategy", "how a reduction's per-thread partial results combine", [
    I32EnumAttrCase<"none", 0>,
    I32EnumAttrCase<"warp", 1>,
    I32EnumAttrCase<"block", 2>]> {
  let cppNamespace = "::mlir::sluice::exec";
  let genSpecializedAttr = 0;
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

def Exec_ScheduleAttr : AttrDef<Exec_Dialect, "Schedule"> {
  let mnemonic = "schedule";
  let summary = "how a generated kernel maps onto blocks, threads and vectors";
  let description = [{
    The schedule of a fused kernel (docs/Codegen.md, "Schedules"), as
    decided by `scheduleOps` (include/sluice/Codegen/Schedule.h):
    `elementwise` (a grid-stride loop over all points, `vector` contiguous
    points per thread and step) or `row_block` (one block per point of the
    `outer` dims, its threads covering the `inner` dims,
    `elements_per_thread` each); `grid` blocks of `threads` threads; how
    reductions combine across threads (`none`, `warp` shuffles, `block`
    through shared memory). `outer` and `inner` name the dims in iteration
    order; the last inner dim is the vector dim.

    `column_block` (CUDA column reductions, docs/Codegen.md "Column
    reductions"): a two-stage reduction over the `inner` dims (rows) for
    each point of the `outer` dims (columns). Stage 1 runs on a grid of
    `grid` column tiles x `row_chunks` row chunks, blocks of
    `threads / rows` lanes (threadIdx.x, each `vector` consecutive
    columns; the last outer dim is the vector dim) x `rows` rows
    (threadIdx.y); stage 2 (the kernel `<name>_total`) on `grid` blocks of
    `threads / rows x vector` threads, one per column.

    A `row_block` with column reductions (reductions over the `outer` dims
    besides the row reductions over the `inner` ones) has `row_chunks` =
    `grid` > 0: block c takes the c-th chunk of consecutive outer points,
    its threads accumulate their inner points' column sums over the chunk
    and write them to the partials workspace; `<name>_total` (one thread
    per inner point) sums the chunks' partials in chunk order and computes
    what is per column. `rows` is 0 (and not printed) except in
    `column_block`, `row_chunks` except there and in such a row block.

    ```mlir
    #sluice_exec.schedule<mode = row_block, reduction = warp, grid = 6,
        threads = 32, vector = 4, elements_per_thread = 4,
        outer = ["b", "j"], inner = ["i"]>
    ```
  }];
  let parameters = (ins
    EnumParameter<Exec_ScheduleMode>:$mode,
    EnumParameter<Exec_ReductionStrategy>:$reduction,
    "int64_t":$grid,
    "int64_t":$threads,
    "int64_t":$vector,
    "int64_t":$elements_per_thread,
    "ArrayAttr":$outer,
    "ArrayAttr":$inner,
    DefaultValuedParameter<"int64_t", "0">:$row_chunks,
    DefaultValuedParameter<"int64_t", "0">:$rows);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Exec_StreamTilesAttr : AttrDef<Exec_Dialect, "StreamTiles"> {
  let mnemonic = "stream_tiles";
  let summary = "the tiles of a streaming attention kernel";
  let description = [{
    How a `sluice_exec.attention` (the runtime kernels of
    include/sluice/Runtime/sluice_stream*.h) tiles its work: the forward and
    dQ passes take `query_rows` query rows per block (C++: per task) and
    stream over `key_tile` keys per step; the dK/dV pass takes `key_rows`
    keys per block and streams over `query_tile` query rows per step.
    CUDA: `threads` = 32 per warp, each warp owning 16 rows (`query_rows` =
    `key_rows` = threads / 2), shared-memory tiles `head_dim` wide (d and e
    at most that; a multiple of 16). C++: one thread per task (`threads` =
    1), `key_rows` = `key_tile`, `query_tile` = `query_rows`, `head_dim` 0
    (any). Chosen per target by the emitter (sluice_stream_cuda_tiles_for).

    ```mlir
    #sluice_exec.stream_tiles<query_rows = 64, key_tile = 64, key_rows = 64,
        query_tile = 32, head_dim = 64, threads = 128>
    ```
  }];
  let parameters = (ins
    "int64_t":$query_rows,
    "int64_t":$key_tile,
    "int64_t":$key_rows,
    "int64_t":$query_tile,
    "int64_t":$head_dim,
    "int64_t":$threads);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // SLUICE_EXEC_DIALECT_TD
