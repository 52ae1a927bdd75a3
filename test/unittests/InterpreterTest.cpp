//===- InterpreterTest.cpp - the reference interpreter, Philox, rounding --===//

#include "sluice/Interpreter/Interpreter.h"
#include "sluice/Interpreter/FloatRounding.h"
#include "sluice/Runtime/Philox.h"

#include "dialects/sluice/ScalarOps.h"
#include "dialects/sluice/SluiceDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

using namespace mlir;
using namespace mlir::sluice;

//===----------------------------------------------------------------------===//
// Philox
//===----------------------------------------------------------------------===//

namespace {
struct PhiloxVector {
  uint32_t counter[4];
  uint32_t key[2];
  uint32_t expected[4];
};
} // namespace

// Random123's kat_vectors, the three philox4x32 10 lines.
TEST(Philox, KnownAnswerVectors) {
  const PhiloxVector vectors[] = {
      {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
       {0xffffffff, 0xffffffff},
       {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
       {0xa4093822, 0x299f31d0},
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  for (const PhiloxVector &v : vectors) {
    sluice_philox4x32 counter = {
        {v.counter[0], v.counter[1], v.counter[2], v.counter[3]}};
    sluice_philox4x32 out = sluice_philox4x32_10(counter, v.key[0], v.key[1]);
    for (int i = 0; i < 4; ++i)
      EXPECT_EQ(out.v[i], v.expected[i]) << "word " << i;
  }
}

// Known answers of the draw, from the independent numpy implementation of
// test/EndToEnd/Inputs/reference_layer.py (dropout_words): elements 0..7 of
// stream 7 under seed 0x0123456789abcdef are the four words of counters 0
// and 1.
TEST(Philox, DropoutDrawKnownAnswers) {
  const uint64_t seed = 0x0123456789abcdefull, stream = 7;
  const uint32_t expected[8] = {0x34b23a77, 0x8ec43d26, 0xfdbf9305,
                                0xa6c02cf2, 0xf9a36445, 0x1ee17293,
                                0x3ec6e16d, 0xc5949040};
  for (uint64_t e = 0; e < 8; ++e)
    EXPECT_EQ(sluice_dropout_word(seed, stream, e), expected[e]) << e;
}

TEST(Philox, DropoutDrawIsWordEMod4OfCounterEDiv4) {
  uint64_t seed = 0x0123456789abcdefull, stream = 7;
  // Block 0x500000003: counter {3, 5, 7, 0} under key {0x89abcdef,
  // 0x01234567}.
  sluice_philox4x32 counter = {{3, 5, 7, 0}};
  sluice_philox4x32 out = sluice_philox4x32_10(counter, 0x89abcdef, 0x01234567);
  EXPECT_EQ(out.v[1], 0x9372d3c2u); // numpy's answer
  uint32_t threshold = 0x80000000u;
  uint32_t bits = sluice_dropout_keep4(seed, stream, 0x500000003ull, threshold);
  for (uint32_t w = 0; w < 4; ++w) {
    uint64_t element = 0x500000003ull * 4 + w;
    EXPECT_EQ(sluice_dropout_word(seed, stream, element), out.v[w]);
    bool keep = out.v[w] >= threshold;
    EXPECT_EQ(sluice_dropout_keep(seed, stream, element, threshold), keep);
    EXPECT_EQ((bits >> w) & 1u, keep ? 1u : 0u);
    // The threshold is inclusive; one above it drops the element.
    EXPECT_TRUE(sluice_dropout_keep(seed, stream, element, out.v[w]));
    EXPECT_FALSE(sluice_dropout_keep(seed, stream, element, out.v[w] + 1));
    EXPECT_TRUE(sluice_dropout_keep(seed, stream, element, 0.0));
  }
  EXPECT_EQ(bits >> 4, 0u);
}

TEST(Philox, DropoutThresholdIsCeilOfPTimes2To32) {
  EXPECT_EQ(sluice_dropout_threshold(0.0), 0u);
  EXPECT_EQ(sluice_dropout_threshold(-0.0), 0u);
  EXPECT_EQ(sluice_dropout_threshold(0.1), 429496730u); // 429496729.6
  EXPECT_EQ(sluice_dropout_threshold(0.25), 0x40000000u);
  EXPECT_EQ(sluice_dropout_threshold(0.3), 1288490189u);
  EXPECT_EQ(sluice_dropout_threshold(0.5), 0x80000000u);
  EXPECT_EQ(sluice_dropout_threshold(std::ldexp(1.0, -40)), 1u);
  EXPECT_EQ(sluice_dropout_threshold(std::ldexp(1.0, -32)), 1u);
  EXPECT_EQ(sluice_dropout_threshold(1.0 - std::ldexp(1.0, -32)),
            0xffffffffu);
  // Above 1 - 2^-32 the threshold saturates (only the word 2^32 - 1 keeps).
  EXPECT_EQ(sluice_dropout_threshold(1.0 - std::ldexp(1.0, -40)),
            0xffffffffu);
  // The keep test with a probability is the test with its threshold.
  for (uint64_t e = 0; e < 64; ++e)
    EXPECT_EQ(sluice_dropout_keep(5, 9, e, 0.3),
              sluice_dropout_keep(5, 9, e, 1288490189u));
}

//===----------------------------------------------------------------------===//
// Float rounding
//===----------------------------------------------------------------------===//

TEST(InterpreterFloatRounding, F16) {
  using ::mlir::sluice::roundToF16;
  EXPECT_EQ(roundToF16(1.0), 1.0);
  EXPECT_EQ(roundToF16(-2.5), -2.5);
  EXPECT_EQ(roundToF16(0.1), 0.0999755859375);
  EXPECT_EQ(roundToF16(1.0 / 3), 0.333251953125);
  // Ties to even: 1 + 2^-11 lies halfway between 1 and 1 + 2^-10.
  EXPECT_EQ(roundToF16(1.0 + std::ldexp(1.0, -11)), 1.0);
  EXPECT_EQ(roundToF16(1.0 + 3 * std::ldexp(1.0, -11)),
            1.0 + std::ldexp(1.0, -9));
  EXPECT_EQ(roundToF16(1.0 + std::ldexp(1.0, -11) + 1e-12),
            1.0 + std::ldexp(1.0, -10));
  // Overflow: 65504 is the largest finite; 65520 is the tie with 65536.
  EXPECT_EQ(roundToF16(65504.0), 65504.0);
  EXPECT_EQ(roundToF16(65519.99), 65504.0);
  EXPECT_EQ(roundToF16(65520.0), INFINITY);
  EXPECT_EQ(roundToF16(-1e6), -INFINITY);
  // Subnormals: the smallest is 2^-24; 2^-25 ties to 0, 3*2^-25 to 2^-23.
  EXPECT_EQ(roundToF16(std::ldexp(1.0, -24)), std::ldexp(1.0, -24));
  EXPECT_EQ(roundToF16(std::ldexp(1.0, -25)), 0.0);
  EXPECT_EQ(roundToF16(std::ldexp(1.5, -25)), std::ldexp(1.0, -24));
  EXPECT_EQ(roundToF16(std::ldexp(3.0, -25)), std::ldexp(1.0, -23));
  EXPECT_EQ(roundToF16(std::ldexp(1023.0, -24)), std::ldexp(1023.0, -24));
  EXPECT_TRUE(std::signbit(roundToF16(-1e-10)));
  EXPECT_TRUE(std::isnan(roundToF16(NAN)));
  EXPECT_EQ(roundToF16(-INFINITY), -INFINITY);
}

TEST(InterpreterFloatRounding, BF16) {
  using ::mlir::sluice::roundToBF16;
  EXPECT_EQ(roundToBF16(1.0), 1.0);
  EXPECT_EQ(roundToBF16(0.1), 0.10009765625);
  EXPECT_EQ(roundToBF16(M_PI), 3.140625);
  // Ties to even at 8 significant bits.
  EXPECT_EQ(roundToBF16(1.0 + std::ldexp(1.0, -8)), 1.0);
  EXPECT_EQ(roundToBF16(1.0 + 3 * std::ldexp(1.0, -8)),
            1.0 + std::ldexp(1.0, -6));
  // Largest finite (2 - 2^-7) * 2^127; the next tie overflows.
  double largest = std::ldexp(2.0 - std::ldexp(1.0, -7), 127);
  EXPECT_EQ(roundToBF16(largest), largest);
  EXPECT_EQ(roundToBF16(std::ldexp(2.0 - std::ldexp(1.0, -8), 127)), INFINITY);
  EXPECT_EQ(roundToBF16(3.39e38), largest);
  EXPECT_EQ(roundToBF16(3.4e38), INFINITY);
  // Subnormals: the smallest is 2^-133.
  EXPECT_EQ(roundToBF16(std::ldexp(1.0, -133)), std::ldexp(1.0, -133));
  EXPECT_EQ(roundToBF16(std::ldexp(1.0, -134)), 0.0);
  EXPECT_EQ(roundToBF16(std::ldexp(3.0, -134)), std::ldexp(1.0, -132));
  // For floats it is round-to-nearest-even of the top 16 bits.
  for (uint32_t bits : {0x3f808000u, 0x3f818000u, 0x3f80ffffu, 0x40490fdbu,
                        0x00018000u, 0x7f7fffffu}) {
    float value;
    std::memcpy(&value, &bits, 4);
    uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1)) & 0xffff0000u;
    float expected;
    std::memcpy(&expected, &rounded, 4);
    EXPECT_EQ(roundToBF16(value), static_cast<double>(expected))
        << std::hex << bits;
  }
}

TEST(InterpreterFloatRounding, F32AndByType) {
  MLIRContext context;
  Builder b(&context);
  EXPECT_EQ(::mlir::sluice::roundToF32(0.1), static_cast<double>(0.1f));
  EXPECT_EQ(::mlir::sluice::roundToType(0.1, b.getF32Type()),
            static_cast<double>(0.1f));
  EXPECT_EQ(::mlir::sluice::roundToType(0.1, b.getF16Type()), 0.0999755859375);
  EXPECT_EQ(::mlir::sluice::roundToType(0.1, b.getBF16Type()), 0.10009765625);
  EXPECT_EQ(::mlir::sluice::roundToType(0.1, b.getF64Type()), 0.1);
}

//===----------------------------------------------------------------------===//
// The interpreter
//===----------------------------------------------------------------------===//

namespace {

class Interpreter : public ::testing::Test {
protected:
  Interpreter() {
    context
        .loadDialect<SluiceDialect, arith::ArithDialect, math::MathDialect>();
  }

  /// Parses a module holding one graph and returns the graph.
  GraphOp parse(const std::string &source) {
    module = parseSourceString<ModuleOp>(source, &context);
    if (!module)
      return nullptr;
    return llvm::cast<GraphOp>(module->getBody()->front());
  }

  /// A buffer of argument `index`'s type filled by `value(i)`.
  static Buffer input(GraphOp graph, unsigned index,
                      const std::function<double(size_t)> &value) {
    auto type = llvm::cast<NamedTensorType>(graph.getArgumentTypes()[index]);
    Buffer buffer{type, std::vector<double>(*type.getNumElements())};
    for (size_t i = 0; i < buffer.data.size(); ++i)
      buffer.data[i] = value(i);
    return buffer;
  }
  /// A deterministic, irregular fill.
  static double wiggle(size_t i) {
    return std::sin(1.7 * static_cast<double>(i) + 0.3) * 2.0;
  }

  std::vector<Buffer> run(GraphOp graph, std::vector<Buffer> inputs,
                          Precision precision = Precision::F64,
                          uint64_t seed = 42) {
    InterpreterOptions options;
    options.precision = precision;
    options.seed = seed;
    llvm::Expected<std::vector<Buffer>> results =
        ::mlir::sluice::interpret(graph, inputs, options);
    if (!results) {
      ADD_FAILURE() << llvm::toString(results.takeError());
      return {};
    }
    return std::move(*results);
  }

  std::string runError(GraphOp graph, std::vector<Buffer> inputs) {
    llvm::Expected<std::vector<Buffer>> results =
        ::mlir::sluice::interpret(graph, inputs, InterpreterOptions());
    if (results)
      return "<no error>";
    return llvm::toString(results.takeError());
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

/// The element of `buffer` at the named position `at`.
double at(const Buffer &buffer,
          std::initializer_list<std::pair<const char *, int64_t>> at) {
  int64_t offset = 0;
  for (unsigned d = 0; d < buffer.type.getRank(); ++d) {
    int64_t index = -1;
    for (auto [name, i] : at)
      if (buffer.type.getDimNames()[d].getValue() == name)
        index = i;
    EXPECT_GE(index, 0) << "no index for a dimension";
    offset = offset * buffer.type.getSizes()[d] + index;
  }
  return buffer.data[offset];
}

} // namespace

TEST_F(Interpreter, ContractBatchedMatmulWithScale) {
  // r[b, n, m] = 0.5 * sum_k a[b, m, k] * w[k, b, n], each in its own layout.
  GraphOp graph = parse(R"mlir(
    sluice.graph @g(%a: !sluice.tensor<[b=2, m=3, k=4], f32> {sluice.name = "a"},
                    %w: !sluice.tensor<[k=4, b=2, n=2], f32> {sluice.name = "w"})
        -> (!sluice.tensor<[b=2, n=2, m=3], f32> {sluice.name = "r"}) {
      %r = sluice.contract %a, %w {scale = 0.5 : f64}
          : (!sluice.tensor<[b=2, m=3, k=4], f32>, !sluice.tensor<[k=4, b=2, n=2], f32>)
          -> !sluice.tensor<[b=2, n=2, m=3], f32>
      sluice.return %r : !sluice.tensor<[b=2, n=2, m=3], f32>
    })mlir");
  ASSERT_TRUE(graph);
  Buffer a = input(graph, 0, [](size_t i) { return double(i) - 7; });
  Buffer w = input(graph, 1, [](size_t i) { return 0.25 * double(i) + 1; });
  std::vector<Buffer> r = run(graph, {a, w});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].type, graph.getResultTypes()[0]);
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t m = 0; m < 3; ++m) {
        double sum = 0;
        for (int64_t k = 0; k < 4; ++k)
          sum += a.data[(b * 3 + m) * 4 + k] * w.data[(k * 2 + b) * 2 + n];
        EXPECT_DOUBLE_EQ(r[0].data[(b * 2 + n) * 3 + m], 0.5 * sum);
      }
  // One known value: b=0, n=0, m=0: a = -7..-4, w = 1, 2, 3, 4 (stride 4).
  EXPECT_DOUBLE_EQ(r[0].data[0], 0.5 * (-7 * 1 + -6 * 2 + -5 * 3 + -4 * 4));
}

TEST_F(Interpreter, Reductions) {
  GraphOp graph = parse(R"mlir(
    sluice.graph @g(%x: !sluice.tensor<[i=3, j=4, k=5], f32> {sluice.name = "x"})
        -> (!sluice.tensor<[k=5, i=3], f32> {sluice.name = "s"},
            !sluice.tensor<[j=4], f32> {sluice.name = "m"}) {
      %s = sluice.reduce sum %x over ["j"]
          : !sluice.tensor<[i=3, j=4, k=5], f32> -> !sluice.tensor<[k=5, i=3], f32>
      %m = sluice.reduce max %x over ["k", "i"]
          : !sluice.tensor<[i=3, j=4, k=5], f32> -> !sluice.tensor<[j=4], f32>
      sluice.return %s, %m : !sluice.tensor<[k=5, i=3], f32>, !sluice.tensor<[j=4], f32>
    })mlir");
  ASSERT_TRUE(graph);
  Buffer x = input(graph, 0, wiggle);
  std::vector<Buffer> r = run(graph, {x});
  ASSERT_EQ(r.size(), 2u);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t k = 0; k < 5; ++k) {
      double sum = 0;
      for (int64_t j = 0; j < 4; ++j)
        sum += x.data[(i * 4 + j) * 5 + k];
      EXPECT_DOUBLE_EQ(r[0].data[k * 3 + i], sum);
    }
  for (int64_t j = 0; j < 4; ++j) {
    double max = -INFINITY;
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t k = 0; k < 5; ++k)
        max = std::max(max, x.data[(i * 4 + j) * 5 + k]);
    EXPECT_EQ(r[1].data[j], max);
  }
}

TEST_F(Interpreter, MapBroadcastsByNameWithIndexDims) {
  // y[i, j] = 2 x[j, i] + b[i] + j, computed in f64.
  GraphOp graph = parse(R"mlir(
    sluice.graph @g(%x: !sluice.tensor<[j=3, i=4], f32> {sluice.name = "x"},
                    %b: !sluice.tensor<[i=4], f32> {sluice.name = "b"})
        -> (!sluice.tensor<[i=4, j=3], f32> {sluice.name = "y"}) {
      %y = sluice.map (%x, %b) {index_dims = ["j"]}
          : (!sluice.tensor<[j=3, i=4], f32>, !sluice.tensor<[i=4], f32>)
          -> !sluice.tensor<[i=4, j=3], f32> {
      ^bb0(%xv: f64, %bv: f64, %jv: index):
        %two = arith.constant 2.0 : f64
        %t = arith.mulf %xv, %two : f64
        %s = arith.addf %t, %bv : f64
        %ji = arith.index_cast %jv : index to i64
        %jf = arith.sitofp %ji : i64 to f64
        %r = arith.addf %s, %jf : f64
        sluice.yield %r : f64
      }
      sluice.return %y : !sluice.tensor<[i=4, j=3], f32>
    })mlir");
  ASSERT_TRUE(graph);
  Buffer x = input(graph, 0, wiggle);
  Buffer b = input(graph, 1, [](size_t i) { return 10.0 * i; });
  std::vector<Buffer> r = run(graph, {x, b});
  ASSERT_EQ(r.size(), 1u);
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 3; ++j)
      EXPECT_DOUBLE_EQ(r[0].data[i * 3 + j],
                       2 * x.data[j * 4 + i] + 10.0 * i + j);
}

TEST_F(Interpreter, MapComparisonsAndSelect) {
  // y = (x > 0 && j <= 1) ? sqrt(x) : -x, exercising cmpf, cmpi, select.
  GraphOp graph = parse(R"mlir(
    sluice.graph @g(%x: !sluice.tensor<[j=3], f32> {sluice.name = "x"})
        -> (!sluice.tensor<[j=3], f32> {sluice.name = "y"}) {
      %y = sluice.map (%x) {index_dims = ["j"]}
          : (!sluice.tensor<[j=3], f32>) -> !sluice.tensor<[j=3], f32> {
      ^bb0(%xv: f64, %jv: index):
        %zero = arith.constant 0.0 : f64
        %one = arith.constant 1 : index
        %pos = arith.cmpf ogt, %xv, %zero : f64
        %early = arith.cmpi ule, %jv, %one : index
        %both = arith.andi %pos, %early : i1
        %root = math.sqrt %xv : f64
        %neg = arith.negf %xv : f64
        %r = arith.select %both, %root, %neg : f64
        sluice.yield %r : f64
      }
      sluice.return %y : !sluice.tensor<[j=3], f32>
    })mlir");
  ASSERT_TRUE(graph);
  std::vector<Buffer> r = run(
      graph, {Buffer{llvm::cast<NamedTensorType>(graph.getArgumentTypes()[0]),
                     {4.0, -9.0, 16.0}}});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].data, (std::vector<double>{2.0, 9.0, -16.0}));
}

TEST_F(Interpreter, RelayoutAndRename) {
  GraphOp graph = parse(R"mlir(
    sluice.graph @g(%x: !sluice.tensor<[j=2, i=3], f32> {sluice.name = "x"})
        -> (!sluice.tensor<[i=3, j=2], f32> {sluice.name = "t"},
            !sluice.tensor<[k=2, i=3], f32> {sluice.name = "n"}) {
      %t = sluice.relayout %x : !sluice.tensor<[j=2, i=3], f32> -> !sluice.tensor<[i=3, j=2], f32>
      %n = sluice.rename %x : !sluice.tensor<[j=2, i=3], f32> -> !sluice.tensor<[k=2, i=3], f32>
      sluice.return %t, %n : !sluice.tensor<[i=3, j=2], f32>, !sluice.tensor<[k=2, i=3], f32>
    })mlir");
  ASSERT_TRUE(graph);
  Buffer x = input(graph, 0, [](size_t i) { return double(i); });
  std::vector<Buffer> r = run(graph, {x});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].data, (std::vector<double>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(r[1].data, x.data);
  EXPECT_EQ(r[1].type, graph.getResultTypes()[1]);
}

TEST_F(Interpreter, RandomMaskIsDefinedByNamesAndStream) {
  GraphOp graph = parse(R"mlir(
    sluice.graph @g() -> (!sluice.tensor<[b=3, a=4], f32> {sluice.name = "m0"},
                          !sluice.tensor<[b=3, a=4], f32> {sluice.name = "m1"},
                          !sluice.tensor<[a=4, b=3], f32> {sluice.name = "m2"},
                          !sluice.tensor<[b=3, a=4], f32> {sluice.name = "m3"}) {
      %m0 = sluice.random_mask {probability = 0.5 : f64, stream = 3 : i64} : !sluice.tensor<[b=3, a=4], f32>
      %m1 = sluice.random_mask {probability = 0.5 : f64, stream = 3 : i64} : !sluice.tensor<[b=3, a=4], f32>
      %m2 = sluice.random_mask {probability = 0.5 : f64, stream = 3 : i64} : !sluice.tensor<[a=4, b=3], f32>
      %m3 = sluice.random_mask {probability = 0.5 : f64, stream = 4 : i64} : !sluice.tensor<[b=3, a=4], f32>
      sluice.return %m0, %m1, %m2, %m3 : !sluice.tensor<[b=3, a=4], f32>, !sluice.tensor<[b=3, a=4], f32>, !sluice.tensor<[a=4, b=3], f32>, !sluice.tensor<[b=3, a=4], f32>
    })mlir");
  ASSERT_TRUE(graph);
  std::vector<Buffer> r = run(graph, {}, Precision::F64, /*seed=*/99);
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0].data, r[1].data);
  EXPECT_NE(r[0].data, r[3].data);
  uint32_t half = sluice_dropout_threshold(0.5);
  for (int64_t a = 0; a < 4; ++a)
    for (int64_t b = 0; b < 3; ++b) {
      // The element index: the names sorted, the innermost moved last. In
      // [b, a] that is (b, a); in [a, b], (a, b).
      double expected = sluice_dropout_keep(99, 3, b * 4 + a, half) ? 1 : 0;
      EXPECT_EQ(at(r[0], {{"a", a}, {"b", b}}), expected);
      EXPECT_EQ(at(r[2], {{"a", a}, {"b", b}}),
                sluice_dropout_keep(99, 3, a * 3 + b, half) ? 1 : 0);
      EXPECT_EQ(at(r[3], {{"a", a}, {"b", b}}),
                sluice_dropout_keep(99, 4, b * 4 + a, half) ? 1 : 0);
    }
  // Another seed, another mask.
  std::vector<Buffer> other = run(graph, {}, Precision::F64, /*seed=*/100);
  ASSERT_EQ(other.size(), 4u);
  EXPECT_NE(other[0].data, r[0].data);
}

TEST_F(Interpreter, RandomMaskDependsOnlyOnTheInnermostDimOfTheLayout) {
  GraphOp graph = parse(R"mlir(
    sluice.graph @g() -> (!sluice.tensor<[c=2, b=3, a=4], f32> {sluice.name = "m0"},
                          !sluice.tensor<[b=3, c=2, a=4], f32> {sluice.name = "m1"}) {
      %m0 = sluice.random_mask {probability = 0.5 : f64, stream = 3 : i64} : !sluice.tensor<[c=2, b=3, a=4], f32>
      %m1 = sluice.random_mask {probability = 0.5 : f64, stream = 3 : i64} : !sluice.tensor<[b=3, c=2, a=4], f32>
      sluice.return %m0, %m1 : !sluice.tensor<[c=2, b=3, a=4], f32>, !sluice.tensor<[b=3, c=2, a=4], f32>
    })mlir");
  ASSERT_TRUE(graph);
  std::vector<Buffer> r = run(graph, {}, Precision::F64, /*seed=*/11);
  ASSERT_EQ(r.size(), 2u);
  int kept = 0;
  for (int64_t a = 0; a < 4; ++a)
    for (int64_t b = 0; b < 3; ++b)
      for (int64_t c = 0; c < 2; ++c) {
        // (b, c) sorted, then the innermost a.
        double expected =
            sluice_dropout_keep(11, 3, (b * 2 + c) * 4 + a, 0.5) ? 1 : 0;
        kept += expected != 0;
        EXPECT_EQ(at(r[0], {{"a", a}, {"b", b}, {"c", c}}), expected);
        EXPECT_EQ(at(r[1], {{"a", a}, {"b", b}, {"c", c}}), expected);
      }
  EXPECT_GT(kept, 0);
  EXPECT_LT(kept, 24);
}

TEST_F(Interpreter, RandomMaskKeepsAboutOneMinusP) {
  GraphOp graph = parse(R"mlir(
    sluice.graph @g() -> (!sluice.tensor<[x=512, y=512], f32> {sluice.name = "m"}) {
      %m = sluice.random_mask {probability = 0.3 : f64, stream = 1 : i64} : !sluice.tensor<[x=512, y=512], f32>
      sluice.return %m : !sluice.tensor<[x=512, y=512], f32>
    })mlir");
  ASSERT_TRUE(graph);
  std::vector<Buffer> r = run(graph, {});
  ASSERT_EQ(r.size(), 1u);
  double kept = 0;
  for (double v : r[0].data) {
    ASSERT_TRUE(v == 0.0 || v == 1.0);
    kept += v;
  }
  // 262144 draws: the standard deviation of the fraction is ~0.0009.
  EXPECT_NEAR(kept / r[0].data.size(), 0.7, 0.005);
}

//===----------------------------------------------------------------------===//
// Composites against direct double computations
//===----------------------------------------------------------------------===//

TEST_F(Interpreter, Softmax) {
  GraphOp graph = parse(R"mlir(
    sluice.graph @g(%x: !sluice.tensor<[k=5, j=3], f32> {sluice.name = "x"})
        -> (!sluice.tensor<[k=5, j=3], f32> {sluice.name = "y"}) {
      %y = sluice.softmax %x over "k" : !sluice.tensor<[k=5, j=3], f32>
      sluice.return %y : !sluice.tensor<[k=5, j=3], f32>
    })mlir");
  ASSERT_TRUE(graph);
  Buffer x = input(graph, 0, wiggle);
  std::vector<Buffer> r = run(graph, {x});
  ASSERT_EQ(r.size(), 1u);
  for (int64_t j = 0; j < 3; ++j) {
    double max = -INFINITY, sum = 0;
    for (int64_t k = 0; k < 5; ++k)
      max = std::max(max, x.data[k * 3 + j]);
    for (int64_t k = 0; k < 5; ++k)
      sum += std::exp(x.data[k * 3 + j] - max);
    for (int64_t k = 0; k < 5; ++k)
      EXPECT_NEAR(r[0].data[k * 3 + j], std::exp(x.data[k * 3 + j] - max) / sum,
                  1e-15);
  }
  // The caller's graph is untouched: the composite is still there.
  int softmaxes = 0;
  graph.walk([&](SoftmaxOp) { ++softmaxes; });
  EXPECT_EQ(softmaxes, 1);
}

TEST_F(Interpreter, LayerNorm) {
  GraphOp graph = parse(R"mlir(
    sluice.graph @g(%x: !sluice.tensor<[j=3, i=8], f32> {sluice.name = "x"},
                    %s: !sluice.tensor<[i=8], f32> {sluice.name = "s"},
                    %b: !sluice.tensor<[i=8], f32> {sluice.name = "b"})
        -> (!sluice.tensor<[j=3, i=8], f32> {sluice.name = "y"},
            !sluice.tensor<[j=3], f32> {sluice.name = "mean"},
            !sluice.tensor<[j=3], f32> {sluice.name = "rstd"}) {
      %y, %mean, %rstd = sluice.layernorm %x, %s, %b over ["i"] {eps = 1.0e-3 : f64}
          : (!sluice.tensor<[j=3, i=8], f32>, !sluice.tensor<[i=8], f32>, !sluice.tensor<[i=8], f32>)
          -> (!sluice.tensor<[j=3, i=8], f32>, !sluice.tensor<[j=3], f32>, !sluice.tensor<[j=3], f32>)
      sluice.return %y, %mean, %rstd : !sluice.tensor<[j=3, i=8], f32>, !sluice.tensor<[j=3], f32>, !sluice.tensor<[j=3], f32>
    })mlir");
  ASSERT_TRUE(graph);
  Buffer x = input(graph, 0, wiggle);
  Buffer s = input(graph, 1, [](size_t i) { return 1.0 + 0.1 * i; });
  Buffer b = input(graph, 2, [](size_t i) { return 0.5 - 0.2 * i; });
  std::vector<Buffer> r = run(graph, {x, s, b});
  ASSERT_EQ(r.size(), 3u);
  for (int64_t j = 0; j < 3; ++j) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < 8; ++i)
      mean += x.data[j * 8 + i] / 8;
    for (int64_t i = 0; i < 8; ++i)
      var += (x.data[j * 8 + i] - mean) * (x.data[j * 8 + i] - mean) / 8;
    double rstd = 1 / std::sqrt(var + 1e-3);
    EXPECT_NEAR(r[1].data[j], mean, 1e-14);
    EXPECT_NEAR(r[2].data[j], rstd, 1e-13);
    for (int64_t i = 0; i < 8; ++i)
      EXPECT_NEAR(r[0].data[j * 8 + i],
                  (x.data[j * 8 + i] - mean) * rstd * s.data[i] + b.data[i],
                  1e-13);
  }
}

namespace {
/// A one-input, one-result graph applying `op` (textual) to [j=4, i=6].
std::string unaryGraph(const std::string &op) {
  return R"mlir(
    sluice.graph @g(%x: !sluice.tensor<[j=4, i=6], f32> {sluice.name = "x"})
        -> (!sluice.tensor<[j=4, i=6], f32> {sluice.name = "y"}) {
      %y = sluice.)mlir" +
         op + R"mlir( %x : !sluice.tensor<[j=4, i=6], f32>
      sluice.return %y : !sluice.tensor<[j=4, i=6], f32>
    })mlir";
}
} // namespace

TEST_F(Interpreter, Activations) {
  struct Case {
    const char *op;
    std::function<double(double)> reference;
  };
  const Case cases[] = {
      {"relu", [](double x) { return std::max(x, 0.0); }},
      {"gelu",
       [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }},
      {"gelu_tanh",
       [](double x) {
         return 0.5 * x *
                (1 +
                 std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
       }},
  };
  for (const Case &c : cases) {
    GraphOp graph = parse(unaryGraph(c.op));
    ASSERT_TRUE(graph) << c.op;
    Buffer x = input(graph, 0, wiggle);
    std::vector<Buffer> r = run(graph, {x});
    ASSERT_EQ(r.size(), 1u) << c.op;
    for (size_t i = 0; i < x.data.size(); ++i)
      EXPECT_NEAR(r[0].data[i], c.reference(x.data[i]), 1e-14)
          << c.op << " at " << x.data[i];
  }
}

TEST_F(Interpreter, BiasAddAndResidualAdd) {
  GraphOp graph = parse(R"mlir(
    sluice.graph @g(%x: !sluice.tensor<[j=4, i=6], f32> {sluice.name = "x"},
                    %b: !sluice.tensor<[i=6], f32> {sluice.name = "b"},
                    %r: !sluice.tensor<[i=6, j=4], f32> {sluice.name = "r"})
        -> (!sluice.tensor<[j=4, i=6], f32> {sluice.name = "y"},
            !sluice.tensor<[j=4, i=6], f32> {sluice.name = "z"}) {
      %y = sluice.bias_add %x, %b
          : (!sluice.tensor<[j=4, i=6], f32>, !sluice.tensor<[i=6], f32>) -> !sluice.tensor<[j=4, i=6], f32>
      %z = sluice.residual_add %y, %r
          : (!sluice.tensor<[j=4, i=6], f32>, !sluice.tensor<[i=6, j=4], f32>) -> !sluice.tensor<[j=4, i=6], f32>
      sluice.return %y, %z : !sluice.tensor<[j=4, i=6], f32>, !sluice.tensor<[j=4, i=6], f32>
    })mlir");
  ASSERT_TRUE(graph);
  Buffer x = input(graph, 0, wiggle);
  Buffer b = input(graph, 1, [](size_t i) { return 100.0 * i; });
  Buffer res = input(graph, 2, [](size_t i) { return 1000.0 * i; });
  std::vector<Buffer> r = run(graph, {x, b, res});
  ASSERT_EQ(r.size(), 2u);
  for (int64_t j = 0; j < 4; ++j)
    for (int64_t i = 0; i < 6; ++i) {
      double y = x.data[j * 6 + i] + b.data[i];
      EXPECT_DOUBLE_EQ(r[0].data[j * 6 + i], y);
      EXPECT_DOUBLE_EQ(r[1].data[j * 6 + i], y + res.data[i * 4 + j]);
    }
}

TEST_F(Interpreter, Dropout) {
  GraphOp graph = parse(R"mlir(
    sluice.graph @g(%x: !sluice.tensor<[j=8, i=16], f32> {sluice.name = "x"})
        -> (!sluice.tensor<[j=8, i=16], f32> {sluice.name = "y"},
            !sluice.tensor<[j=8, i=16], f32> {sluice.name = "mask"}) {
      %y, %m = sluice.dropout %x {probability = 0.25 : f64, stream = 5 : i64}
          : !sluice.tensor<[j=8, i=16], f32> -> !sluice.tensor<[j=8, i=16], f32>, !sluice.tensor<[j=8, i=16], f32>
      sluice.return %y, %m : !sluice.tensor<[j=8, i=16], f32>, !sluice.tensor<[j=8, i=16], f32>
    })mlir");
  ASSERT_TRUE(graph);
  Buffer x = input(graph, 0, wiggle);
  std::vector<Buffer> r = run(graph, {x}, Precision::F64, /*seed=*/7);
  ASSERT_EQ(r.size(), 2u);
  int dropped = 0;
  for (int64_t j = 0; j < 8; ++j)
    for (int64_t i = 0; i < 16; ++i) {
      // The innermost dim (i) last: j, then i.
      bool keep = sluice_dropout_keep(7, 5, j * 16 + i, 0.25);
      dropped += !keep;
      EXPECT_EQ(r[1].data[j * 16 + i], keep ? 1.0 : 0.0);
      EXPECT_DOUBLE_EQ(r[0].data[j * 16 + i],
                       keep ? x.data[j * 16 + i] / 0.75 : 0.0);
    }
  EXPECT_GT(dropped, 0);
  EXPECT_LT(dropped, 128);
}

TEST_F(Interpreter, CausalMask) {
  GraphOp graph = parse(R"mlir(
    sluice.graph @g(%x: !sluice.tensor<[k=4, h=2, j=4], f32> {sluice.name = "x"})
        -> (!sluice.tensor<[k=4, h=2, j=4], f32> {sluice.name = "y"}) {
      %y = sluice.causal_mask %x query "j" key "k" : !sluice.tensor<[k=4, h=2, j=4], f32>
      sluice.return %y : !sluice.tensor<[k=4, h=2, j=4], f32>
    })mlir");
  ASSERT_TRUE(graph);
  Buffer x = input(graph, 0, wiggle);
  std::vector<Buffer> r = run(graph, {x});
  ASSERT_EQ(r.size(), 1u);
  for (int64_t k = 0; k < 4; ++k)
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t j = 0; j < 4; ++j) {
        int64_t offset = (k * 2 + h) * 4 + j;
        EXPECT_EQ(r[0].data[offset], k > j ? -INFINITY : x.data[offset]);
      }
}

//===----------------------------------------------------------------------===//
// Precision and errors
//===----------------------------------------------------------------------===//

TEST_F(Interpreter, F32ModeRoundsToStorageTypes) {
  GraphOp graph = parse(R"mlir(
    sluice.graph @g(%x: !sluice.tensor<[i=3], f16> {sluice.name = "x"},
                    %w: !sluice.tensor<[i=3], bf16> {sluice.name = "w"})
        -> (!sluice.tensor<[i=3], f16> {sluice.name = "y"},
            !sluice.tensor<[i=3], bf16> {sluice.name = "z"}) {
      %y = sluice.gelu %x : !sluice.tensor<[i=3], f16>
      %z = sluice.relu %w : !sluice.tensor<[i=3], bf16>
      sluice.return %y, %z : !sluice.tensor<[i=3], f16>, !sluice.tensor<[i=3], bf16>
    })mlir");
  ASSERT_TRUE(graph);
  auto xType = llvm::cast<NamedTensorType>(graph.getArgumentTypes()[0]);
  auto wType = llvm::cast<NamedTensorType>(graph.getArgumentTypes()[1]);
  Buffer x{xType, {0.1, 1.0 / 3, -2.0}};
  Buffer w{wType, {0.1, -1.0, M_PI}};
  std::vector<Buffer> f32 = run(graph, {x, w}, Precision::F32);
  ASSERT_EQ(f32.size(), 2u);
  for (size_t i = 0; i < 3; ++i) {
    // Inputs are rounded to their storage type, the body runs in float, the
    // result is rounded to f16.
    float xf = static_cast<float>(::mlir::sluice::roundToF16(x.data[i]));
    float half = xf * 0.5f;
    float erf =
        std::erf(static_cast<float>(xf * static_cast<float>(M_SQRT1_2)));
    double expected = ::mlir::sluice::roundToF16(half * (erf + 1.0f));
    EXPECT_NEAR(f32[0].data[i], expected, std::abs(expected) * 1e-3);
    EXPECT_EQ(f32[0].data[i], ::mlir::sluice::roundToF16(f32[0].data[i]));
  }
  EXPECT_EQ(f32[1].data, (std::vector<double>{0.10009765625, 0.0, 3.140625}));

  // In f64 nothing is rounded.
  std::vector<Buffer> f64 = run(graph, {x, w}, Precision::F64);
  ASSERT_EQ(f64.size(), 2u);
  EXPECT_EQ(f64[1].data, (std::vector<double>{0.1, 0.0, M_PI}));
  EXPECT_NEAR(f64[0].data[0], 0.5 * 0.1 * (1 + std::erf(0.1 / std::sqrt(2.0))),
              1e-16);
}

TEST_F(Interpreter, F32ModeContractsInFloat) {
  GraphOp graph = parse(R"mlir(
    sluice.graph @g(%a: !sluice.tensor<[k=3], f32> {sluice.name = "a"},
                    %b: !sluice.tensor<[k=3], f32> {sluice.name = "b"})
        -> (!sluice.tensor<[], f32> {sluice.name = "c"}) {
      %c = sluice.contract %a, %b : (!sluice.tensor<[k=3], f32>, !sluice.tensor<[k=3], f32>) -> !sluice.tensor<[], f32>
      sluice.return %c : !sluice.tensor<[], f32>
    })mlir");
  ASSERT_TRUE(graph);
  auto type = llvm::cast<NamedTensorType>(graph.getArgumentTypes()[0]);
  Buffer a{type, {1.0, 1e8, -1e8}}, b{type, {1.0, 1.0, 1.0}};
  // In float, 1 + 1e8 rounds to 1e8 and the sum is 0; in double it is 1.
  EXPECT_EQ(run(graph, {a, b}, Precision::F32)[0].data[0], 0.0);
  EXPECT_EQ(run(graph, {a, b}, Precision::F64)[0].data[0], 1.0);
}

TEST_F(Interpreter, InputErrorsNameTheArgument) {
  GraphOp graph = parse(unaryGraph("relu"));
  ASSERT_TRUE(graph);
  Buffer x = input(graph, 0, wiggle);
  EXPECT_EQ(runError(graph, {}),
            "graph @g takes 1 arguments but 0 inputs were given");
  Buffer shortX = x;
  shortX.data.pop_back();
  EXPECT_EQ(runError(graph, {shortX}),
            "input #0 ('x') has 23 elements but its type "
            "!sluice.tensor<[j=4, i=6], f32> has 24");
  Buffer wrongType{x.type.withElementType(Float16Type::get(&context)), x.data};
  EXPECT_EQ(runError(graph, {wrongType}),
            "input #0 ('x') has type !sluice.tensor<[j=4, i=6], f16> but the "
            "argument has type !sluice.tensor<[j=4, i=6], f32>");
}

TEST_F(Interpreter, UnsupportedBodyOpIsNamed) {
  GraphOp graph = parse(R"mlir(
    sluice.graph @g(%x: !sluice.tensor<[i=2], f32> {sluice.name = "x"})
        -> (!sluice.tensor<[i=2], f32> {sluice.name = "y"}) {
      %y = sluice.map (%x) : (!sluice.tensor<[i=2], f32>) -> !sluice.tensor<[i=2], f32> {
      ^bb0(%v: f64):
        %c = math.cbrt %v : f64
        sluice.yield %c : f64
      }
      sluice.return %y : !sluice.tensor<[i=2], f32>
    })mlir");
  ASSERT_TRUE(graph);
  std::string error = runError(graph, {input(graph, 0, wiggle)});
  EXPECT_NE(error.find("cannot evaluate 'math.cbrt'"), std::string::npos)
      << error;
}

namespace {
/// x / 10 + 0.05 in (0, 1): every table function is defined there.
double inUnitInterval(size_t i) { return 0.05 + 0.09 * static_cast<double>(i); }
double ieeeMaximum(double a, double b) { return std::fmax(a, b); }
double ieeeMinimum(double a, double b) { return std::fmin(a, b); }

/// A one-map graph applying `opName` (unary, or binary on (x, 1 - x)).
std::string scalarOpGraph(llvm::StringRef opName, bool binary) {
  std::string args = binary ? "%v, %w" : "%v";
  return R"mlir(
    sluice.graph @g(%x: !sluice.tensor<[i=10], f32> {sluice.name = "x"})
        -> (!sluice.tensor<[i=10], f32> {sluice.name = "y"}) {
      %y = sluice.map (%x) : (!sluice.tensor<[i=10], f32>) -> !sluice.tensor<[i=10], f32> {
      ^bb0(%v: f64):
        %one = arith.constant 1.0 : f64
        %w = arith.subf %one, %v : f64
        %r = )mlir" +
         opName.str() + " " + args + R"mlir( : f64
        sluice.yield %r : f64
      }
      sluice.return %y : !sluice.tensor<[i=10], f32>
    })mlir";
}
} // namespace

// Every float row of dialects/sluice/ScalarOps.def is classified to its own
// opcode and evaluated by the interpreter as the row's EVAL column says.
TEST_F(Interpreter, EveryFloatRowOfTheScalarTable) {
  struct Row {
    llvm::StringRef opName;
    ScalarOpcode opcode;
    bool binary;
    std::function<double(double, double)> eval;
  };
  std::vector<Row> rows = {
#define SLUICE_FLOAT_UNARY(NAME, OP, PRINT, SPELLING, EVAL, DERIV)            \
  {OP::getOperationName(), ScalarOpcode::NAME, false,                          \
   [](double x, double) { return EVAL; }},
#define SLUICE_FLOAT_BINARY(NAME, OP, PRINT, SPELLING, EVAL)                  \
  {OP::getOperationName(), ScalarOpcode::NAME, true,                           \
   [](double x, double y) { return EVAL; }},
#include "dialects/sluice/ScalarOps.def"
  };
  ASSERT_GE(rows.size(), 30u);
  for (const Row &row : rows) {
    GraphOp graph = parse(scalarOpGraph(row.opName, row.binary));
    ASSERT_TRUE(graph) << row.opName.str();
    auto map = llvm::cast<MapOp>(graph.getBody().front().front());
    Operation *op = map.getYield().getValue().getDefiningOp();
    EXPECT_EQ(getScalarOpcode(op), row.opcode) << row.opName.str();
    EXPECT_NE(getScalarPrint(row.opcode), ScalarPrint::None)
        << row.opName.str();
    Buffer x = input(graph, 0, inUnitInterval);
    std::vector<Buffer> r = run(graph, {x});
    ASSERT_EQ(r.size(), 1u) << row.opName.str();
    for (size_t i = 0; i < x.data.size(); ++i)
      EXPECT_EQ(r[0].data[i], row.eval(x.data[i], 1.0 - x.data[i]))
          << row.opName.str() << " at " << x.data[i];
  }
  EXPECT_EQ(getScalarOpcode(module->getOperation()), ScalarOpcode::Unsupported);
}
