"""What decides "ours or stock" for a conversion?  The analysis behind issue 25's choice model.

    python benchmarks/studies/choice_signal.py benchmarks/results/plan_train.json.gz \
        benchmarks/results/plan_train_303_404.json.gz \
        --fresh benchmarks/results/plan_fresh_101.json.gz benchmarks/results/plan_fresh_202.json.gz \
        benchmarks/results/plan_fresh_505_606.json.gz --out benchmarks/results/choice_signal.md

The choice model (``lowering/choosing/fitted_model.py``, fitted by ``plan_choice.py fit``, ``harness/fit_choice.py``) keeps our plan in one plan
family (warp-scope shuffles) and leaves the rest to stock: 84.9% of conversions within 3% of the
fastest option held out, against 81.7% for stock everywhere; issue 25 asks for 90%.  The idea
tested here: give the gate stock Triton's own lowering of the pair, so that it compares our pick
with what stock would do, conversion by conversion.

0. **Stock's warp shuffles**, predicted from the layouts (``lowering/choosing/stock_lowering.py``),
   against the shfl count of stock's measured round trip in every row.
1. **Stock's twin.**  The training runs of seeds 303 and 404 counted every candidate's PTX mix
   (shfl, ld/st.shared, ldmatrix, stmatrix, bar) in the round trip A -> B -> A, whose return
   trip B -> A is stock's in every mode; so a candidate whose round-trip mix equals stock's has
   stock's forward mix: it is stock's *twin* (``stock_twin``).  ``stock_mimic`` names the twin
   at compile time from the candidates alone (a rule, no measurement); its match rate is
   reported.
2. **Does knowing stock's lowering help?**  On the conversions whose twin is known (the best a
   mimic could do), gates that compare our candidates with the twin: the planner's cost model's
   relative gain above a margin, and a ridge fit of log(time / stock) on the feature difference
   candidate - twin, held out by fresh-draw part and by layout family.
3. **Why not.**  The twin (same instructions as stock, our emission) against stock; candidates
   with fewer memory instructions than stock against stock.
4. **Lane-scope shuffle candidates against stock's predicted shuffles**: where ours moves at most
   half as many words as stock, and unpacked, it won every time.
5. **Gates on all training conversions**, held out as ``fit_choice.py`` holds out (by source
   kernel, by layout family): the family gate before and after its stock-shuffle family
   (``choice.gated_family_of``), a ridge fit of log ratio over candidate and conversion
   features, a logistic classifier of "rank 0 wins by more than 3%".
6. **Fresh draws** (never used in fitting; only stock and the pass's own output were timed).
"""

from __future__ import annotations

import on_path  # noqa: E402,F401  (benchmarks/ on sys.path: harness/ and the maintained harnesses)
import argparse
import gzip
import json
import math
import sys
from collections import Counter, defaultdict

import numpy as np
from scipy.optimize import minimize

from harness import fit_choice
from harness.checkout import geomean, make_package_importable  # noqa: E402

MIX_KEYS = ("shfl", "ld_shared", "st_shared", "ldmatrix", "stmatrix", "bar")
CONTEXTS = ("chain", "latency")
WITHIN = fit_choice.WITHIN


# ------------------------------------------------------------------------------------ loading

def describe(plan) -> dict:
    """What the analysis needs of one candidate: its method, access forms (shared memory) or
    packing (shuffles), the choice model's features and the planner's cost weight."""
    from linear_layouts.lowering.choosing import fitted_model as choice
    from linear_layouts.lowering.cost import plan_cost
    from linear_layouts.lowering.plan import SharedAccess
    out = {"method": str(plan.method), "f": choice.plan_features(plan), "weight": plan_cost(plan).weight}
    if plan.shared is not None:
        accesses = [op for op in plan.shared.ops if isinstance(op, SharedAccess)]
        out["store"] = sorted({op.form.name for op in accesses if op.is_store})
        out["load"] = sorted({op.form.name for op in accesses if not op.is_store})
    if plan.shuffle is not None:
        out["elements_per_word"] = plan.shuffle.elements_per_word
    return out


def load_rows(paths) -> list[dict]:
    """Every measured row with its verified candidates in the planner's order (as
    ``fit_choice.load`` plans them) and what was timed of each."""
    make_package_importable()
    from plan_choice import release
    from linear_layouts.dialect.encodings import to_linear_layout
    from linear_layouts.lowering.planner import plan_candidates
    from linear_layouts.lowering.verify import verify_plan
    rows = []
    for path in paths:
        run = json.load(gzip.open(path, "rt") if path.endswith(".gz") else open(path))
        version = release(run["environment"]["triton"])
        for row in run["rows"]:
            shape = tuple(row["shape"])
            src = to_linear_layout(row["src"], shape, conventions=version)
            dst = to_linear_layout(row["dst"], shape, conventions=version)
            plans, scope = plan_candidates(src, dst, row["bits"], "sm_90")
            plans = [p for p in plans if verify_plan(p).ok]
            rows.append({**row, "path": path, "version": version, "scope": str(scope), "plans": plans,
                         "described": [describe(p) for p in plans]})
    return rows


def worse_ratio(mode: dict, stock: dict) -> float | None:
    """The worse of the two contexts' time over stock's (what issue 25 counts)."""
    times = [mode.get(c, {}).get("us") for c in CONTEXTS]
    if not all(times):
        return None
    return max(t / stock[c]["us"] for t, c in zip(times, CONTEXTS))


def training_cases(rows) -> list[dict]:
    """The conversions ``fit_choice.load`` keeps: stock and every candidate timed in both
    contexts.  Each candidate carries its worse-context ratio to stock."""
    cases = []
    for row in rows:
        modes = row["modes"]
        if not all(modes["stock"].get(c, {}).get("us") for c in CONTEXTS) or not row["plans"]:
            continue
        ratios = [worse_ratio(modes.get(f"cand{k}", {}), modes["stock"]) for k in range(len(row["plans"]))]
        if None in ratios:
            continue
        origin = row["family"]
        case = {"row": row, "case": row["case"], "origin": origin, "ratios": ratios, "scope": row["scope"],
                "num_warps": row["num_warps"], "bits": row["bits"],
                "elements_per_thread": math.prod(row["shape"]) / (32 * row["num_warps"]),
                "layout_family": origin if origin.startswith("fresh:") or origin == "issue25" else "corpus"}
        case["source_group"] = fit_choice.source_group(case)
        cases.append(case)
    return cases


def fastest(case) -> float:
    return min([1.0] + case["ratios"])


# ------------------------------------------------------------------------ 1. stock's twin

def stock_twin(row) -> int | None:
    """The first candidate whose round-trip instruction mix equals stock's, or None (stock's
    lowering is none of ours, or the candidates' mixes were not counted).  Both round trips
    return B -> A through stock's lowering, so equal round trips mean equal forward trips.
    Example (seed 303, conversion 0, 1024 x i64, 2 warps): stock and candidate 0 both count
    ld.shared 40, st.shared 40, bar 19, no shuffle: candidate 0 is stock's twin."""
    stock_mix = row["modes"]["stock"].get("chain_mix")
    for k in range(len(row["plans"])):
        mix = row["modes"].get(f"cand{k}", {}).get("chain_mix")
        if mix is not None and stock_mix is not None and all(mix.get(x) == stock_mix.get(x) for x in MIX_KEYS):
            return k
    return None


def has_counted_mixes(row) -> bool:
    return bool(row["plans"]) and all("chain_mix" in row["modes"].get(f"cand{k}", {})
                                      for k in range(len(row["plans"])))


def stock_mimic(described: list[dict], stock_shuffles: int | None) -> int | None:
    """Which of our candidates stock Triton 3.6's lowering most likely is, from the candidates
    and ``stock_warp_shuffles`` of the pair (read off the twins of seeds 303/404):

    * where stock shuffles: our shuffle candidate with as many shuffles (else the first one);
    * otherwise stock goes through shared memory with vector loads and stores: our
      vector -> vector candidate (stock uses ldmatrix/stmatrix less often than our plans could).
    """
    def first(test):
        return next((k for k, d in enumerate(described) if test(d)), None)
    if stock_shuffles is not None:
        same = first(lambda d: d["method"] == "shuffle" and d["f"][0] == stock_shuffles)
        return same if same is not None else first(lambda d: d["method"] == "shuffle")
    return first(lambda d: d["method"] == "shared" and d["store"] == ["VECTOR"] and d["load"] == ["VECTOR"])


# ------------------------------------------------------------------------------ scoring

def summary(ratios, cases) -> dict:
    close = sum(r <= WITHIN * fastest(c) for r, c in zip(ratios, cases))
    return {"n": len(cases), "close": close, "percent": 100 * close / max(len(cases), 1),
            "geomean": geomean(ratios), "worst": max(ratios), "above": sum(r > 1.05 for r in ratios)}


def row_text(name, s) -> str:
    return (f"| {name} | {s['n']} | {s['close']} ({s['percent']:.1f}%) | {s['geomean']:.3f} | {s['worst']:.3f} | "
            f"{s['above']} |")


TABLE_HEAD = ["| gate | n | within 3% of fastest | geomean choice/stock | worst | above 1.05 |",
              "|---|---:|---:|---:|---:|---:|"]


def held_out(cases, group_key, fit, decide) -> list[float]:
    """Leave one group out: ``fit(train)`` -> model, ``decide(model, case)`` -> the choice's
    ratio to stock (1.0: stock)."""
    groups = defaultdict(list)
    for case in cases:
        groups[case[group_key]].append(case)
    chosen = {}
    for name, test in groups.items():
        model = fit([c for c in cases if c[group_key] != name])
        for case in test:
            chosen[id(case)] = decide(model, case)
    return [chosen[id(c)] for c in cases]


def draw_part(case) -> str:
    """Seed 303's conversion 12 -> "fresh303-2" (five parts per draw, as fit_choice.py splits)."""
    draw, rest = case["case"].split("/", 1)
    return f"{draw}-{int(rest.split(':')[0]) % 5}"


# ---------------------------------------------------------- 2. gates that know stock's twin

def delta_features(case, k) -> np.ndarray:
    d = case["row"]["described"]
    return np.array(d[k]["f"], float) - np.array(d[case["twin"]]["f"], float)


def fit_delta_ridge(train, lam=1.0):
    """log(candidate / stock) ~ w . (features(candidate) - features(twin)), the twin left out."""
    X, y = [], []
    for case in train:
        for k, r in enumerate(case["ratios"]):
            if k != case["twin"]:
                X.append(delta_features(case, k))
                y.append(math.log(r))
    X, y = np.array(X), np.array(y)
    return np.linalg.solve(X.T @ X + lam * np.eye(X.shape[1]), X.T @ y)


def decide_delta(w, case, margin) -> float:
    predicted = {k: float(delta_features(case, k) @ w) for k in range(len(case["ratios"])) if k != case["twin"]}
    if not predicted:
        return 1.0
    k = min(predicted, key=predicted.get)
    return case["ratios"][k] if predicted[k] < -margin else 1.0


def decide_cost_gain(case, margin) -> float:
    """Rank 0 when the planner's cost model puts it more than ``margin`` (relative) below the twin."""
    d = case["row"]["described"]
    twin_weight, pick_weight = d[case["twin"]]["weight"], d[0]["weight"]
    gain = (twin_weight - pick_weight) / twin_weight if twin_weight else 0.0
    return case["ratios"][0] if case["twin"] != 0 and gain > margin else 1.0


# --------------------------------------------------------------- 4. gates on all conversions

def family_gate(with_stock: bool):
    """fit_choice.py's gate (rank 0, kept per plan family), refitted on the training folds:
    (fit, decide).  ``with_stock``: families as ``choice.gated_family_of`` names them (the
    stock-shuffle family apart), else as ``choice.family_of`` (the model before it)."""
    def fit(train):
        return fit_choice.fit_gates([as_fit_case(c, with_stock) for c in train], None, 5)

    def decide(gates, case):
        return fit_choice.decide(as_fit_case(case, with_stock), None, gates)
    return fit, decide


def as_fit_case(case, with_stock: bool) -> dict:
    """The shape fit_choice's functions take: candidates with family and ratio."""
    from linear_layouts.lowering.choosing import fitted_model as choice
    family_of = choice.gated_family_of if with_stock else choice.family_of
    row = case["row"]
    cands = [{"f": d["f"], "ratio": r, "family": family_of(p, case["scope"])}
             for d, r, p in zip(row["described"], case["ratios"], row["plans"])]
    return {"cands": cands}


def conversion_features(case, k=0) -> np.ndarray:
    """Candidate k's model features (log1p) and the conversion's context."""
    d = case["row"]["described"][k]
    shuffle = d["method"] == "shuffle"
    return np.concatenate([[1.0], np.log1p(np.array(d["f"], float)),
                           [case["num_warps"] == 1, math.log2(case["num_warps"]),
                            math.log2(max(case["elements_per_thread"], 1)), case["bits"] / 32,
                            case["scope"] == "lane", shuffle, shuffle and case["scope"] == "warp",
                            d["f"][6] > 0, len(case["ratios"]), math.log1p(d["weight"]), k == 0]])


def fit_ratio_ridge(train, lam=10.0):
    X = np.array([conversion_features(c, k) for c in train for k in range(len(c["ratios"]))])
    y = np.array([math.log(r) for c in train for r in c["ratios"]])
    return np.linalg.solve(X.T @ X + lam * np.eye(X.shape[1]), X.T @ y)


def decide_ratio_ridge(w, case, margin=0.06) -> float:
    predicted = [float(conversion_features(case, k) @ w) for k in range(len(case["ratios"]))]
    k = min(range(len(predicted)), key=predicted.__getitem__)
    return case["ratios"][k] if predicted[k] < -margin else 1.0


def fit_logistic(train, lam=1.0):
    """P(rank 0 beats stock by more than 3%) from rank 0's features and the conversion's."""
    X = np.array([conversion_features(c) for c in train])
    y = np.array([c["ratios"][0] < 1 / WITHIN for c in train], float)

    def loss(w):
        z = X @ w
        return np.sum(np.logaddexp(0, z) - y * z) + lam * np.sum(w[1:] ** 2)

    def grad(w):
        g = X.T @ (1 / (1 + np.exp(-(X @ w))) - y)
        g[1:] += 2 * lam * w[1:]
        return g
    return minimize(loss, np.zeros(X.shape[1]), jac=grad, method="L-BFGS-B").x


def decide_logistic(w, case, threshold=0.5) -> float:
    probability = 1 / (1 + math.exp(-float(conversion_features(case) @ w)))
    return case["ratios"][0] if probability > threshold else 1.0


# ----------------------------------------------------------------------------------- main

def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("train_json", nargs="+")
    parser.add_argument("--fresh", nargs="*", default=[])
    parser.add_argument("--out", default="")
    args = parser.parse_args(argv)
    rows = load_rows(args.train_json)
    fresh_rows = {path: load_rows([path]) for path in args.fresh}
    cases = training_cases(rows)
    lines = ["# What decides ours or stock: stock's own lowering as a feature (issue 25)", "",
             f"Produced by `python benchmarks/studies/choice_signal.py {' '.join(argv or sys.argv[1:])}`.", "",
             f"Training conversions: {len(cases)} (stock everywhere within 3% of the fastest: "
             f"{sum(1.0 <= WITHIN * fastest(c) for c in cases)})."]

    # 0. stock's warp shuffles, predicted
    from linear_layouts.lowering.choosing.stock_lowering import stock_warp_shuffles
    from linear_layouts.dialect.encodings import to_linear_layout
    exact = shuffling = exact_shuffling = measured_rows = 0
    for row in rows + [r for fresh in fresh_rows.values() for r in fresh]:
        mix = row["modes"]["stock"].get("chain_mix")
        if mix is None:
            continue
        shape = tuple(row["shape"])
        a, b = (to_linear_layout(row[k], shape, conventions=row["version"]) for k in ("src", "dst"))
        row["stock_shuffles"] = stock_warp_shuffles(a, b, row["bits"])
        predicted = (row["stock_shuffles"] or 0) + (stock_warp_shuffles(b, a, row["bits"]) or 0)
        measured_rows += 1
        exact += predicted == mix["shfl"]
        shuffling += predicted > 0 or mix["shfl"] > 0
        exact_shuffling += (predicted > 0 or mix["shfl"] > 0) and predicted == mix["shfl"]
    lines += ["", "## 0. Stock's warp shuffles, predicted", "",
              f"`lowering/choosing/stock_lowering.py` against the shfl count of stock's measured round trip (training "
              f"runs{' and fresh draws' if args.fresh else ''}): exact in **{exact} of {measured_rows}**, "
              f"{exact_shuffling} of the {shuffling} where stock or the prediction shuffles.  The rules were read "
              "off these same counts (no times); `benchmarks/studies/stock_lowering_oracle.py` checks them on conversions "
              "never seen (`stock_lowering_oracle.md`)."]

    # 1. stock's twin and the compile-time mimic
    counted = [r for r in rows if has_counted_mixes(r)]
    tally = Counter()
    for row in counted:
        twin = stock_twin(row)
        mimic = stock_mimic(row["described"], row.get("stock_shuffles"))
        tally[(row["scope"], "twin" if twin is not None else "no twin")] += 1
        tally[(row["scope"], "mimic right")] += twin is not None and mimic == twin
    n_twin = sum(v for (s, k), v in tally.items() if k == "twin")
    n_mimic = sum(v for (s, k), v in tally.items() if k == "mimic right")
    lines += ["", "## 1. Stock's twin among our candidates", "",
              f"Conversions whose every candidate's round-trip mix was counted: {len(counted)}. "
              f"One of our candidates has exactly stock's mix (its twin) in **{n_twin}** ({100 * n_twin / len(counted):.1f}%); "
              f"in the rest stock's lowering is none of ours (mostly other vector widths of ld/st.shared, "
              f"or ldmatrix and stmatrix together).", "",
              f"The compile-time mimic (`stock_mimic`: where stock shuffles, our shuffle candidate with its count; "
              f"else vector -> vector shared memory) names the twin in **{n_mimic}** of {len(counted)} "
              f"({100 * n_mimic / len(counted):.1f}%; {100 * n_mimic / max(n_twin, 1):.1f}% of those with a twin).", "",
              "| scope | conversions | with a twin | mimic names it |", "|---|---:|---:|---:|"]
    for scope in sorted({s for s, _ in tally}):
        n = tally[(scope, "twin")] + tally[(scope, "no twin")]
        lines.append(f"| {scope} | {n} | {tally[(scope, 'twin')]} | {tally[(scope, 'mimic right')]} |")

    # 2. gates that know stock's twin (the best a mimic could give them)
    twinned = [c for c in cases if stock_twin(c["row"]) is not None]
    for case in twinned:
        case["twin"] = stock_twin(case["row"])
        case["draw_part"] = draw_part(case)
    lines += ["", "## 2. Gates that know stock's twin (an exact mimic), on those conversions", "",
              *TABLE_HEAD, row_text("stock everywhere", summary([1.0] * len(twinned), twinned))]
    for margin in (0.0, 0.1, 0.3):
        lines.append(row_text(f"rank 0 when the cost model's gain over the twin > {margin:.0%}",
                              summary([decide_cost_gain(c, margin) for c in twinned], twinned)))
    for key in ("draw_part", "layout_family"):
        for margin in (0.0, 0.03, 0.1):
            ratios = held_out(twinned, key, fit_delta_ridge, lambda w, c, m=margin: decide_delta(w, c, m))
            lines.append(row_text(f"ridge on features - twin's, margin {margin:.0%}, held out by {key}",
                                  summary(ratios, twinned)))

    # 3. why: our emission of stock's own instructions, and fewer memory instructions
    twin_ratios = [c["ratios"][c["twin"]] for c in twinned]
    again = [worse_ratio(c["row"]["modes"]["stock_again"], c["row"]["modes"]["stock"]) for c in cases
             if "stock_again" in c["row"]["modes"]]
    again = [r for r in again if r]
    outcome = Counter()
    for case in cases:
        stock_mix = case["row"]["modes"]["stock"].get("chain_mix")
        for k, r in enumerate(case["ratios"]):
            mix = case["row"]["modes"].get(f"cand{k}", {}).get("chain_mix")
            if not mix or not stock_mix:
                continue
            delta = {x: mix[x] - stock_mix[x] for x in MIX_KEYS}
            memory = delta["ld_shared"] + delta["st_shared"] + delta["ldmatrix"] + delta["stmatrix"]
            kind = ("same as stock" if not any(delta.values()) else
                    "fewer memory instructions, no more shuffles" if memory < 0 and delta["shfl"] <= 0 else
                    "more memory instructions, no fewer shuffles" if memory > 0 and delta["shfl"] >= 0 else "mixed")
            verdict = "wins > 3%" if r < 1 / WITHIN else "loses > 5%" if r > 1.05 else "within"
            outcome[(kind, verdict)] += 1
    lines += ["", "## 3. Why not: what our emission costs beyond the instruction mix", "",
              f"Stock's binary timed twice (`stock_again` / `stock`): {len(again)} conversions, "
              f"{sum(r > WITHIN for r in again)} beyond 3%, {sum(r < 1 / WITHIN for r in again)} below: the timing is steady.", "",
              f"Stock's twins (our plan, stock's exact instruction mix) / stock: geomean "
              f"{geomean(twin_ratios):.3f}, {sum(r > 1.05 for r in twin_ratios)} of {len(twin_ratios)} above 1.05, "
              f"{sum(r < 1 / WITHIN for r in twin_ratios)} more than 3% faster: with the same instructions our code is "
              f"slower (address arithmetic, selects, register moves the mix does not count).", "",
              "Every timed candidate with a counted mix, by its mix against stock's:", "",
              "| mix against stock's | wins > 3% | within | loses > 5% |", "|---|---:|---:|---:|"]
    for kind in ("same as stock", "fewer memory instructions, no more shuffles", "mixed",
                 "more memory instructions, no fewer shuffles"):
        lines.append(f"| {kind} | {outcome[(kind, 'wins > 3%')]} | {outcome[(kind, 'within')]} | "
                     f"{outcome[(kind, 'loses > 5%')]} |")

    # 4. lane-scope shuffle candidates against stock's predicted shuffles
    buckets = defaultdict(list)
    for case in cases:
        if case["scope"] != "lane":
            continue
        stock_shuffles = case["row"].get("stock_shuffles")
        for d, plan, r in zip(case["row"]["described"], case["row"]["plans"], case["ratios"]):
            if d["method"] != "shuffle":
                continue
            ours = d["f"][0]
            if stock_shuffles is None:
                relation = "stock goes through shared memory"
            else:
                relation = ("ours at most half of stock's" if 2 * ours <= stock_shuffles else
                            "ours as many as stock's" if ours == stock_shuffles else "other")
            packed = "packed" if d["elements_per_word"] > 1 else "unpacked"
            buckets[(relation, packed, "1 warp" if case["num_warps"] == 1 else "warps")].append(r)
    lines += ["", "## 4. Lane-scope shuffle candidates against stock's predicted shuffles", "",
              "| our shuffles against stock's | packing | warps | candidates | wins > 3% | loses > 5% | geomean / stock |",
              "|---|---|---|---:|---:|---:|---:|"]
    for (relation, packed, warps), ratios in sorted(buckets.items()):
        lines.append(f"| {relation} | {packed} | {warps} | {len(ratios)} | {sum(r < 1 / WITHIN for r in ratios)} | "
                     f"{sum(r > 1.05 for r in ratios)} | {geomean(ratios):.3f} |")

    # 5. gates on all training conversions, held out as fit_choice.py holds out
    lines += ["", "## 5. Gates on all training conversions, held out", ""]
    for key in ("source_group", "layout_family"):
        lines += [f"Held out by {key.replace('_', ' ')}:", "", *TABLE_HEAD,
                  row_text("stock everywhere", summary([1.0] * len(cases), cases)),
                  row_text("before: rank 0, per-family gate",
                           summary(held_out(cases, key, *family_gate(False)), cases)),
                  row_text("now: the same with the stock-shuffle family (fit_choice.py)",
                           summary(held_out(cases, key, *family_gate(True)), cases)),
                  row_text("ridge on log(candidate / stock), margin 6%",
                           summary(held_out(cases, key, fit_ratio_ridge, decide_ratio_ridge), cases)),
                  row_text("logistic P(rank 0 wins > 3%) > 0.5",
                           summary(held_out(cases, key, fit_logistic, decide_logistic), cases)), ""]

    # 5. fresh draws: only stock and the pass's own output were timed
    if args.fresh:
        from linear_layouts.lowering.choosing import fitted_model as choice
        model = choice.load_model()
        lines += ["## 6. Fresh draws (never used in fitting)", "",
                  "Only stock and the pass's output (`ours`) were timed, so a gate is scored where its "
                  "choice was timed: stock, or rank 0 where `ours` emitted it (ours's mix differs from stock's "
                  "in the pick's direction: shuffles for a shuffle pick).", "",
                  "| draw | n | ours timed and differs from stock | stock everywhere: within 3% | "
                  "the model now: measurable / within 3% / worst / above 1.05 | ours chosen now, never timed |",
                  "|---|---:|---:|---:|---|---|"]
        for path, fresh in fresh_rows.items():
            measurable, close_model, worst, above, differs, close_stock, n = 0, 0, 1.0, 0, 0, 0, 0
            untimed = Counter()
            for row in fresh:
                modes = row["modes"]
                ours = worse_ratio(modes.get("ours", {}), modes["stock"]) if all(
                    modes["stock"].get(c, {}).get("us") for c in CONTEXTS) else None
                if ours is None or not row["plans"]:
                    continue
                n += 1
                best = min(1.0, ours)
                close_stock += 1.0 <= WITHIN * best
                ours_mix, stock_mix = modes["ours"].get("chain_mix"), modes["stock"].get("chain_mix")
                emitted = ours_mix is not None and ours_mix != stock_mix
                differs += emitted
                pick = choice.choose(row["plans"], row["scope"], model)
                if pick.plan is None:
                    r = 1.0
                elif emitted and (pick.plan.method != choice.Method.SHUFFLE or ours_mix["shfl"] > stock_mix["shfl"]):
                    r = ours
                else:
                    untimed[pick.family] += 1
                    continue
                measurable += 1
                close_model += r <= WITHIN * best
                worst, above = max(worst, r), above + (r > 1.05)
            lines.append(f"| {path.split('/')[-1]} | {n} | {differs} | {close_stock} ({100 * close_stock / max(n, 1):.1f}%) | "
                         f"{measurable} / {close_model} ({100 * close_model / max(measurable, 1):.1f}%) / {worst:.3f} / {above} | "
                         f"{', '.join(f'{k}: {v}' for k, v in sorted(untimed.items())) or '-'} |")
    text = "\n".join(lines) + "\n"
    if args.out:
        open(args.out, "w").write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
