//! A whole sweep on the driver's test doubles (`study::scripted`): the study driver, the
//! sweep's rounds and budget, its plan from the pilot, rounds.json and the report's answers,
//! each visit's figure scripted from this machine's noise. What it checks ties the rate
//! simulations to the real loop: the budget they count, the plan they make, and the judgement
//! they apply are the sweep's own.
use super::*;
use bytepath::record::{RunRecord, VisitKind};
use bytepath::report::folder::StudyOutput;
use bytepath::study::scripted::{Figure, ScriptedMachine, ScriptedRunner};
use clap::Parser;
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::AtomicBool;

static QUIET: AtomicBool = AtomicBool::new(false);

/// The challengers, in `crossover_rule::pairs`' order of their questions, and copy.
const CHALLENGERS: [&str; QUESTIONS] = ["gather", "zerocopy"];
/// Runs scripted per point: far past any round a budget of these sweeps buys.
const RUNS: usize = 400;

/// A scripted sweep's matrix (copy, gather, zerocopy at every size and flow count), its
/// true ratios by size (gather against copy, zerocopy against copy) and its noise.
#[derive(Clone, Copy)]
pub struct Shape {
    pub sizes: &'static [usize],
    pub threads: &'static [usize],
    pub truth: &'static [[f64; QUESTIONS]],
    pub spread: Spread,
    pub rho: f64,
}

impl Shape {
    fn truth(&self, size: usize) -> [f64; QUESTIONS] {
        let at = self
            .sizes
            .iter()
            .position(|s| *s == size)
            .expect("a size of the shape");
        self.truth[at]
    }

    fn list(values: &[usize]) -> String {
        values
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// The checked sweep: 12 points, 1 KiB and 16 KiB at 1 and 2 flows, spreads drawn from
/// noise.json.
const CHECKED: Shape = Shape {
    sizes: &[1024, 16384],
    threads: &[1, 2],
    truth: &[[1.0, 0.8], [1.25, 1.0]],
    spread: Spread::Measured,
    rho: 0.0,
};

/// The runner: each point's `n`-th run reads 10 Gbit/s × its true ratio × the shared regime
/// of its group's `n`-th round × its own AR(1) noise (pair spreads as the shape says, at its
/// lag-1 correlation). The points of a group are visited once each per round, so the `n`-th
/// runs of a group are one round.
fn runner(seed: u64, noise: &Noise, shape: Shape) -> ScriptedRunner {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut own: HashMap<(String, usize, usize), Vec<f64>> = HashMap::new();
    let mut regime: HashMap<(usize, usize), Vec<f64>> = HashMap::new();
    for &size in shape.sizes {
        for &threads in shape.threads {
            let shared = (0..RUNS).map(|_| noise.visit_log_sd * normal(&mut rng));
            regime.insert((size, threads), shared.collect());
            for mechanism in ["copy", CHALLENGERS[0], CHALLENGERS[1]] {
                let sd = shape.spread.point_sd(&mut rng, noise);
                let series = noise::ar1(&mut rng, RUNS, sd, shape.rho);
                own.insert((mechanism.to_string(), size, threads), series);
            }
        }
    }
    ScriptedRunner::new(move |spec: &bytepath::config::RunSpec, n| {
        let (size, threads) = (spec.message_size, spec.threads);
        let name = spec.mechanism.name();
        let ratio = match CHALLENGERS.iter().position(|c| *c == name) {
            Some(q) => shape.truth(size)[q],
            None => 1.0,
        };
        let log = regime[&(size, threads)][n] + own[&(name.to_string(), size, threads)][n];
        Figure::Measured {
            headline: 10.0 * ratio * log.exp(),
            cpu_ns_per_byte: 0.5,
        }
    })
}

/// A folder where the sweep's per-visit fdatasync costs nothing (tmpfs where there is one).
fn folder() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    match shm.is_dir() {
        true => tempfile::tempdir_in(shm).expect("a folder in /dev/shm"),
        false => tempfile::tempdir().expect("a temporary folder"),
    }
}

/// Runs the sweep of `shape` at `budget`, on scripted figures; its folder.
fn scripted_sweep(seed: u64, budget: &str, noise: &Noise, shape: Shape) -> tempfile::TempDir {
    let dir = folder();
    let (sizes, threads) = (Shape::list(shape.sizes), Shape::list(shape.threads));
    let line = [
        "bytepath",
        "sweep",
        "--seed",
        &seed.to_string(),
        "--mechanisms",
        "copy,gather,zerocopy",
        "--sizes",
        &sizes,
        "--threads",
        &threads,
        "--patterns",
        "stream",
        "--budget",
        budget,
    ]
    .map(String::from);
    let bytepath::cli::Command::Sweep(args) = bytepath::cli::Cli::parse_from(line).command else {
        unreachable!("a sweep's command line")
    };
    let spec = bytepath::args::sweep::sweep_spec(&args, &[0, 1]).expect("a valid sweep");
    let runner = runner(seed, noise, shape);
    let machine = ScriptedMachine::new(|_| VISIT_COST_S);
    let output = StudyOutput {
        out: Some(dir.path().join("sweep")),
        ..StudyOutput::default()
    };
    let mut study = bytepath::sweep::Sweep::new(&spec, &runner);
    let status = bytepath::study::drive_on(&mut study, &output, &QUIET, &machine);
    assert_eq!(status.ok(), Some(bytepath::error::Status::Success));
    dir
}

/// Every headline visit's figure: (mechanism, size, threads) → [(round, figure)].
type Figures = HashMap<(String, usize, usize), Vec<(usize, f64)>>;

fn read_visits(dir: &Path) -> (Vec<RunRecord>, Figures) {
    let text = std::fs::read_to_string(dir.join("visits.jsonl")).expect("visits.jsonl");
    let visits: Vec<RunRecord> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("a visit record"))
        .collect();
    let mut figures = Figures::new();
    for r in &visits {
        let v = r.visit.as_ref().expect("a visit");
        if v.kind == VisitKind::Headline && r.status == "completed" {
            let point = (
                r.config.mechanism.name().to_string(),
                r.config.message_size_bytes,
                r.config.threads,
            );
            figures
                .entry(point)
                .or_default()
                .push((v.round, r.headline_value()));
        }
    }
    (visits, figures)
}

/// A question's (challenger, copy) pairs of one group, by round, of rounds before `before`.
fn cell(
    figures: &Figures,
    q: usize,
    (size, threads): (usize, usize),
    before: usize,
) -> Vec<(f64, f64)> {
    let of = |m: &str| &figures[&(m.to_string(), size, threads)];
    let mut pairs: Vec<(usize, f64, f64)> = of(CHALLENGERS[q])
        .iter()
        .filter(|(round, _)| *round < before)
        .filter_map(|(round, c)| {
            let (_, b) = of("copy").iter().find(|(r, _)| r == round)?;
            Some((*round, *c, *b))
        })
        .collect();
    pairs.sort_by_key(|p| p.0);
    pairs.iter().map(|(_, c, b)| (*c, *b)).collect()
}

fn json(dir: &Path, file: &str) -> Value {
    let text = std::fs::read_to_string(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
    serde_json::from_str(&text).expect("JSON")
}

/// The groups in rounds.json's order, as (size, threads).
fn groups(rounds: &Value) -> Vec<(usize, usize)> {
    rounds["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .map(|g| {
            (
                g["size_bytes"].as_u64().unwrap() as usize,
                g["threads"].as_u64().unwrap() as usize,
            )
        })
        .collect()
}

/// The visits' cost is within the budget but for the one group a round may finish after it
/// runs out; each group made the rounds its plan gave it (or the budget cut it short).
fn check_budget(visits: &[RunRecord], rounds: &Value, budget_s: f64) {
    let spent: f64 = visits
        .iter()
        .filter_map(|r| r.visit.as_ref())
        .map(|v| v.wall_s)
        .sum();
    let points = CHECKED.sizes.len() * CHECKED.threads.len() * POINTS;
    // The pilot and the counter round are made whatever the budget.
    let minimum = (points * (PILOT + 1)) as f64 * VISIT_COST_S;
    let total = (budget_s * points as f64).max(minimum);
    let one_group = POINTS as f64 * VISIT_COST_S;
    eprintln!(
        "scripted sweep at {budget_s} s a point: {} visits cost {spent:.2} s of {total:.2} s",
        visits.len()
    );
    assert!(spent <= total + one_group + 1e-9, "{spent} of {total}");
    for g in rounds["groups"].as_array().unwrap() {
        let made = g["rounds_made"].as_u64().unwrap();
        let Some(planned) = g["planned_rounds"].as_u64() else {
            assert_eq!(made, PILOT as u64, "no plan: the pilot alone {g}");
            continue;
        };
        match g["stop"].as_str().unwrap() {
            "planned_rounds_made" => assert_eq!(made, planned, "{g}"),
            "budget_spent" => assert!(made < planned && spent + one_group > total, "{g}"),
            other => panic!("a sweep that ran to its end stops no group for {other}: {g}"),
        }
    }
}

/// rounds.json's plan is what `adaptive::plan` makes of the visits' pilot with the budget
/// `rounds_left` counts: the rate simulations' budget and plan are the sweep's.
fn check_plan(rounds: &Value, figures: &Figures, budget_s: f64) {
    let order = groups(rounds);
    let before = PILOT + 1;
    let pilot = Pilot {
        rounds: PILOT,
        groups: order.len(),
        cells: order
            .iter()
            .enumerate()
            .flat_map(|(g, at)| {
                (0..QUESTIONS).map(move |q| PilotCell {
                    group: g,
                    question: q,
                    pairs: cell(figures, q, *at, before),
                })
            })
            .collect(),
        points: Vec::new(),
    };
    let targets = Targets {
        margin: MARGIN,
        ci: 0.02,
        max_rounds: 1000,
        rounds_left: rounds_left(budget_s, order.len()),
        pilot_alpha: PILOT_ALPHA,
    };
    let planned: Vec<u64> = plan(&pilot, &targets)
        .iter()
        .map(|g| g.planned_rounds as u64)
        .collect();
    let recorded: Vec<u64> = rounds["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["planned_rounds"].as_u64().unwrap())
        .collect();
    eprintln!("planned rounds per group: {recorded:?} (the simulation's plan: {planned:?})");
    assert_eq!(recorded, planned);
}

/// answers.json's crossover cells are this file's judgement of the same visits.
fn check_answers(dir: &Path, rounds: &Value, figures: &Figures) {
    let looks = rounds["looks"].as_u64().unwrap() as usize;
    let settings = Settings {
        margin: rounds["margin"].as_f64().unwrap(),
        looks,
        pilot_rounds: PILOT,
    };
    let rule = Rule { settings, ..rule() };
    let answers = json(dir, "answers.json");
    for (q, challenger) in CHALLENGERS.iter().enumerate() {
        let asked = format!("does {challenger} ");
        let answer = answers
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["question"].as_str().unwrap().contains(&asked))
            .unwrap_or_else(|| panic!("a question about {challenger}"));
        // The report's cells run by thread count, then size.
        let at: Vec<(usize, usize)> = CHECKED
            .threads
            .iter()
            .flat_map(|&t| CHECKED.sizes.iter().map(move |&s| (s, t)))
            .collect();
        let cells: Vec<Vec<(f64, f64)>> = at
            .iter()
            .map(|&a| cell(figures, q, a, usize::MAX))
            .collect();
        let family = judge_question(&cells, rule);
        let reported = answer["cells"].as_array().unwrap();
        assert_eq!(reported.len(), at.len(), "{answer}");
        for (mine, theirs) in family.judged.iter().zip(reported) {
            let state = serde_json::to_value(mine.state).unwrap();
            eprintln!(
                "{challenger}, {}: {state} [{:.4}, {:.4}]; the report: {} [{}, {}]",
                theirs["cell"], mine.low, mine.high, theirs["state"], theirs["low"], theirs["high"]
            );
            assert_eq!(theirs["state"], state, "{theirs}");
            for (key, value) in [
                ("low", mine.low),
                ("high", mine.high),
                ("ratio", mine.ratio),
            ] {
                let reported = theirs[key].as_f64().unwrap();
                assert!(
                    (reported / value - 1.0).abs() < 1e-6,
                    "{key}: {reported} vs {value}"
                );
            }
        }
    }
}

/// Two sweeps: one at the default budget (a plan, two looks), one whose budget the pilot and
/// the counter round spend (no plan, one look at the whole α). The first one's rounds are
/// correlated at ρ = 0.2 rather than the file's (negative) ρ, so that a report that widens
/// its intervals by the rounds' autocorrelation answers differently from a judgement that
/// does not, and this check fails until the simulations' judgement follows the report's.
pub fn check() {
    let noise = noise::measured();
    for (seed, budget, rho) in [(21, DEFAULT_BUDGET_S, 0.2), (22, 0.6, noise.rho_pooled)] {
        let started = std::time::Instant::now();
        let shape = Shape { rho, ..CHECKED };
        let dir = scripted_sweep(seed, &format!("{budget}s"), &noise, shape);
        let dir = dir.path().join("sweep");
        let (visits, figures) = read_visits(&dir);
        let rounds = json(&dir, "rounds.json");
        assert_eq!(rounds["adaptive"], budget == DEFAULT_BUDGET_S, "{rounds}");
        check_budget(&visits, &rounds, budget);
        if budget == DEFAULT_BUDGET_S {
            check_plan(&rounds, &figures, budget);
        }
        check_answers(&dir, &rounds, &figures);
        eprintln!(
            "scripted sweep at {budget} s a point took {:.1} s",
            started.elapsed().as_secs_f64()
        );
    }
}

/// The real loop on `shape` once at `budget_s` a point: the share of crossover cells its
/// answers decided (beats, slower or equivalent), its visits, and what they cost of the budget.
pub fn real_loop(shape: Shape, budget_s: f64) -> (f64, usize, f64) {
    let noise = noise::measured();
    let dir = scripted_sweep(41, &format!("{budget_s}s"), &noise, shape);
    let dir = dir.path().join("sweep");
    let (visits, _) = read_visits(&dir);
    let spent: f64 = visits
        .iter()
        .filter_map(|r| r.visit.as_ref())
        .map(|v| v.wall_s)
        .sum();
    let answers = json(&dir, "answers.json");
    let cells: Vec<&Value> = answers
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| {
            CHALLENGERS.iter().any(|c| {
                a["question"]
                    .as_str()
                    .unwrap()
                    .contains(&format!("does {c} "))
            })
        })
        .flat_map(|a| a["cells"].as_array().unwrap())
        .collect();
    let decided = cells.iter().filter(|c| c["state"] != "undecided").count();
    (decided as f64 / cells.len() as f64, visits.len(), spent)
}
