//===- LayoutSolver.cpp - exact minimization of a factored cost -----------===//
//
// The DP keeps one state per assignment of the frontier (the variables that
// an earlier term read and a later term will read), each carrying the best
// full assignment found for it. A term first branches the state over its
// variables that are not yet assigned, adds its cost, and then every
// variable whose last term it was leaves the frontier: states that agree on
// the rest are merged, keeping the cheaper. Nothing is discarded that a
// later term could tell apart, so the result is the exact minimum.
//
//===----------------------------------------------------------------------===//

#include "sluice/Analysis/LayoutSolver.h"

#include <algorithm>
#include <limits>
#include <map>

using namespace mlir::sluice;

namespace {
constexpr unsigned kUnassigned = std::numeric_limits<unsigned>::max();

struct State {
  double cost = 0;
  std::vector<unsigned> choice;
};
} // namespace

size_t mlir::sluice::termCostIndex(const FactoredProblem &problem,
                                   const FactoredProblem::Term &term,
                                   const std::vector<unsigned> &choice) {
  size_t index = 0;
  for (unsigned var : term.vars)
    index = index * problem.numChoices[var] + choice[var];
  return index;
}

double mlir::sluice::evaluate(const FactoredProblem &problem,
                              const std::vector<unsigned> &choice) {
  double total = 0;
  for (const FactoredProblem::Term &term : problem.terms)
    total += term.costs[termCostIndex(problem, term, choice)];
  return total;
}

bool mlir::sluice::isWellFormed(const FactoredProblem &problem) {
  for (unsigned count : problem.numChoices)
    if (count == 0)
      return false;
  for (const FactoredProblem::Term &term : problem.terms) {
    size_t combinations = 1;
    std::vector<unsigned> sorted = term.vars;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
      return false;
    for (unsigned var : term.vars) {
      if (var >= problem.numChoices.size())
        return false;
      combinations *= problem.numChoices[var];
    }
    if (term.costs.size() != combinations)
      return false;
  }
  return true;
}

std::optional<LayoutSolution>
mlir::sluice::solveExact(const FactoredProblem &problem, uint64_t maxStates) {
  size_t numVars = problem.numChoices.size();
  std::vector<size_t> lastUse(numVars, 0);
  std::vector<bool> used(numVars, false);
  for (size_t t = 0; t < problem.terms.size(); ++t)
    for (unsigned var : problem.terms[t].vars) {
      lastUse[var] = t;
      used[var] = true;
    }

  LayoutSolution solution;
  std::vector<unsigned> frontier;
  std::vector<State> states(1);
  states[0].choice.assign(numVars, kUnassigned);
  for (size_t t = 0; t < problem.terms.size(); ++t) {
    const FactoredProblem::Term &term = problem.terms[t];
    // Branch over the term's variables that enter here.
    for (unsigned var : term.vars) {
      if (std::find(frontier.begin(), frontier.end(), var) != frontier.end())
        continue;
      frontier.push_back(var);
      if (states.size() * problem.numChoices[var] > maxStates)
        return std::nullopt;
      std::vector<State> branched;
      branched.reserve(states.size() * problem.numChoices[var]);
      for (const State &state : states)
        for (unsigned c = 0; c < problem.numChoices[var]; ++c) {
          State next = state;
          next.choice[var] = c;
          branched.push_back(std::move(next));
        }
      states = std::move(branched);
      solution.states += states.size();
    }
    for (State &state : states)
      state.cost += term.costs[termCostIndex(problem, term, state.choice)];
    // Variables read for the last time leave the frontier.
    frontier.erase(std::remove_if(frontier.begin(), frontier.end(),
                                  [&](unsigned var) { return lastUse[var] == t; }),
                   frontier.end());
    std::map<std::vector<unsigned>, size_t> best;
    std::vector<State> merged;
    for (State &state : states) {
      std::vector<unsigned> key;
      for (unsigned var : frontier)
        key.push_back(state.choice[var]);
      auto [it, inserted] = best.try_emplace(key, merged.size());
      if (inserted)
        merged.push_back(std::move(state));
      else if (state.cost < merged[it->second].cost)
        merged[it->second] = std::move(state);
    }
    states = std::move(merged);
  }
  // One state is left (the frontier is empty after the last term).
  const State *winner = &states.front();
  for (const State &state : states)
    if (state.cost < winner->cost)
      winner = &state;
  solution.cost = winner->cost;
  solution.choice = winner->choice;
  for (size_t var = 0; var < numVars; ++var)
    if (!used[var])
      solution.choice[var] = 0;
  return solution;
}

LayoutSolution mlir::sluice::solveExhaustive(const FactoredProblem &problem) {
  size_t numVars = problem.numChoices.size();
  std::vector<unsigned> choice(numVars, 0);
  LayoutSolution best;
  best.cost = std::numeric_limits<double>::infinity();
  while (true) {
    double cost = evaluate(problem, choice);
    ++best.states;
    if (cost < best.cost) {
      best.cost = cost;
      best.choice = choice;
    }
    // The next assignment, the last variable fastest.
    size_t var = numVars;
    while (var > 0) {
      --var;
      if (++choice[var] < problem.numChoices[var])
        break;
      choice[var] = 0;
      if (var == 0)
        return best;
    }
    if (numVars == 0)
      return best;
  }
}
