/**
 * What a policy run may cost. The manifests come from a pull request, so a policy written with a
 * loop over `git` inside a loop over `git` lets the pull request's size decide how long the run
 * takes. kube-apiserver bounds its CEL rules with cel-go's runtime cost; @bufbuild/cel keeps no
 * cost, so each compiled expression is instrumented here: its syntax tree gets gates that count
 * work as cel-go does (one per call and per loop iteration, plus the length of a list searched
 * with `in` and a tenth of the length of a string an operator reads) and throw once a budget is
 * spent, with kube's limits. A run also has a CPU time and a heap budget, checked at the gates.
 */
import { celFunc, CelScalar, isCelList, type CelEnv, type parse } from '@bufbuild/cel';

type Expr = ReturnType<typeof parse>['expr'];

/** The budgets of one run; the defaults are kube-apiserver's for validation rules, plus the run's own. */
export interface PolicyBudget {
  /** Cost of one expression over one object: kube's celconfig.PerCallLimit. */
  perEvaluation: number;
  /** Cost of every expression over one object: kube's celconfig.RuntimeCELCostBudget. */
  perObject: number;
  /** Cost of the whole run (every object, every policy): what a pull request may make the policies do. */
  perRun: number;
  /** CPU seconds the run may take (process user + system time, so a busy machine does not count). */
  cpuSeconds: number;
  /** How much the heap may grow during the run, in MiB. */
  heapMiB: number;
}

export const defaultPolicyBudget: PolicyBudget = { perEvaluation: 1_000_000, perObject: 10_000_000, perRun: 100_000_000, cpuSeconds: 60, heapMiB: 1024 };

/** Which budget a run exceeded, in words a refusal can quote. */
export type Exceeded = { budget: 'perEvaluation' | 'perObject' | 'perRun' | 'cpuSeconds' | 'heapMiB'; limit: number };

/** Counts the cost of a run; the gates charge the one current evaluation (evaluation is synchronous). */
export class CostTracker {
  run = 0;
  object = 0;
  evaluation = 0;
  exceeded: Exceeded | undefined;
  private readonly cpuStart = process.cpuUsage();
  private readonly heapStart = process.memoryUsage().heapUsed;
  private nextCheck = 4096;

  constructor(readonly budget: PolicyBudget) {}

  charge(n: number): void {
    if (this.exceeded) throw new Error('cost budget exceeded');
    this.run += n;
    this.object += n;
    this.evaluation += n;
    const b = this.budget;
    if (this.evaluation > b.perEvaluation) this.exceeded = { budget: 'perEvaluation', limit: b.perEvaluation };
    else if (this.object > b.perObject) this.exceeded = { budget: 'perObject', limit: b.perObject };
    else if (this.run > b.perRun) this.exceeded = { budget: 'perRun', limit: b.perRun };
    else if (this.run >= this.nextCheck) {
      this.nextCheck = this.run + 4096;
      this.checkResources();
    }
    if (this.exceeded) throw new Error('cost budget exceeded');
  }

  /** The time and heap budgets: checked every few thousand units of cost and once per object. */
  checkResources(): void {
    const cpu = process.cpuUsage(this.cpuStart);
    if ((cpu.user + cpu.system) / 1e6 > this.budget.cpuSeconds) this.exceeded = { budget: 'cpuSeconds', limit: this.budget.cpuSeconds };
    else if ((process.memoryUsage().heapUsed - this.heapStart) / 2 ** 20 > this.budget.heapMiB) this.exceeded = { budget: 'heapMiB', limit: this.budget.heapMiB };
  }
}

let current: CostTracker | undefined;

/** Runs `evaluate` with `tracker` charged by the gates. */
export function withTracker<T>(tracker: CostTracker, evaluate: () => T): T {
  current = tracker;
  try {
    return evaluate();
  } finally {
    current = undefined;
  }
}

const textCost = (v: unknown) => (typeof v === 'string' ? Math.ceil(v.length / 10) : v instanceof Uint8Array ? Math.ceil(v.length / 10) : 0);
/** A list searched with `in` costs its length; a map is hashed; a string is read. */
const searchCost = (v: unknown) => (isCelList(v) ? v.size : textCost(v));

const gate = (name: string, cost: (v: unknown) => number) =>
  celFunc(name, [CelScalar.DYN], CelScalar.DYN, (v) => {
    current?.charge(1 + cost(v));
    return v;
  });

const callGate = '__teamkeys_cost_call';
const inGate = '__teamkeys_cost_in';
const loopGate = '__teamkeys_cost_loop';
/** The gates, to be added to the CEL environment the instrumented expressions are planned in. */
export const costFuncs = [gate(callGate, textCost), gate(inGate, searchCost), gate(loopGate, () => 0)];

/** Calls that cost nothing of their own: short-circuiting operators (wrapping would evaluate both sides' errors), indexing, size. */
const free = new Set(['_&&_', '_||_', '_?_:_', '@not_strictly_false', '__not_strictly_false__', '_[_]', '_[?_]', '_?._', 'size', '!_', '-_']);

const wrap = (gateName: string, e: Expr): Expr => ({ ...e, exprKind: { case: 'callExpr', value: { $typeName: 'cel.expr.Expr.Call', function: gateName, args: [e] } } }) as unknown as Expr;

function qualifiedName(e: Expr | undefined): string | undefined {
  if (e?.exprKind.case === 'identExpr') return e.exprKind.value.name;
  if (e?.exprKind.case === 'selectExpr' && !e.exprKind.value.testOnly) {
    const operand = qualifiedName(e.exprKind.value.operand);
    return operand === undefined ? undefined : `${operand}.${e.exprKind.value.field}`;
  }
  return undefined;
}

/** The expression with its gates: in place, since the tree was parsed for this policy alone. */
export function instrument(env: CelEnv, e: Expr): Expr {
  const k = e.exprKind;
  switch (k.case) {
    case 'callExpr': {
      const call = k.value;
      call.args = call.args.map((a) => instrument(env, a));
      // A namespaced function (`strings.quote(x)`) is named by its target: that stays as it is.
      const namespaced = call.target && env.funcs.find(`${qualifiedName(call.target) ?? ''}.${call.function}`) !== undefined;
      if (call.target && !namespaced) call.target = instrument(env, call.target);
      if (free.has(call.function) || namespaced) return e;
      if (call.function === '@in' && call.args.length === 2) call.args[1] = wrap(inGate, call.args[1]!);
      else if (call.target) call.target = wrap(callGate, call.target);
      else if (call.args.length > 0) call.args[0] = wrap(callGate, call.args[0]!);
      return e;
    }
    case 'selectExpr':
      if (k.value.operand) k.value.operand = instrument(env, k.value.operand);
      return e;
    case 'listExpr':
      k.value.elements = k.value.elements.map((x) => instrument(env, x));
      return e;
    case 'structExpr':
      for (const entry of k.value.entries) {
        if (entry.value) entry.value = instrument(env, entry.value);
        if (entry.keyKind.case === 'mapKey') entry.keyKind.value = instrument(env, entry.keyKind.value);
      }
      return e;
    case 'comprehensionExpr': {
      const c = k.value;
      if (c.iterRange) c.iterRange = wrap(callGate, instrument(env, c.iterRange));
      if (c.accuInit) c.accuInit = instrument(env, c.accuInit);
      // The loop condition is evaluated once per item: its gate charges the iteration, and once
      // a budget is spent it stops the loop (an error condition ends the fold).
      if (c.loopCondition) c.loopCondition = wrap(loopGate, instrument(env, c.loopCondition));
      if (c.loopStep) c.loopStep = instrument(env, c.loopStep);
      if (c.result) c.result = instrument(env, c.result);
      return e;
    }
    default:
      return e;
  }
}

/** The variables an expression reads (a comprehension's own variables are not among them). */
export function freeIdents(e: Expr | undefined, bound: ReadonlySet<string> = new Set(), out = new Set<string>()): Set<string> {
  const k = e?.exprKind;
  switch (k?.case) {
    case 'identExpr':
      if (!bound.has(k.value.name)) out.add(k.value.name);
      break;
    case 'selectExpr':
      freeIdents(k.value.operand, bound, out);
      break;
    case 'callExpr':
      freeIdents(k.value.target, bound, out);
      for (const a of k.value.args) freeIdents(a, bound, out);
      break;
    case 'listExpr':
      for (const x of k.value.elements) freeIdents(x, bound, out);
      break;
    case 'structExpr':
      for (const entry of k.value.entries) {
        freeIdents(entry.value, bound, out);
        if (entry.keyKind.case === 'mapKey') freeIdents(entry.keyKind.value, bound, out);
      }
      break;
    case 'comprehensionExpr': {
      const c = k.value;
      freeIdents(c.iterRange, bound, out);
      freeIdents(c.accuInit, bound, out);
      const inner = new Set([...bound, c.iterVar, c.accuVar]);
      freeIdents(c.loopCondition, inner, out);
      freeIdents(c.loopStep, inner, out);
      freeIdents(c.result, new Set([...bound, c.accuVar]), out);
      break;
    }
    default:
      break;
  }
  return out;
}
