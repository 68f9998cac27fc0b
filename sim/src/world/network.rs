//! The network between the handhelds and the ledger: a worker's turn puts
//! its request on the wire, where it is lost, delayed, duplicated or cut
//! off by a partition; the ledger answers it (or dies at a commit); the
//! answer, or the timeout that stands for a lost one, reaches the worker.
//! [`World::deliver`] is the network's part every message shares, the
//! forwarder's batches too.

use rand::Rng;
use stockhop::queue::outcome::TransportOutcome;
use stockhop::wire::{ItemOutcome, SyncResponse};

use crate::check::Answer;

use super::{Event, World};

/// The fetch timeout the worker's transport applies.
const REQUEST_TIMEOUT_MS: i64 = 10_000;
/// Most commits one sync request makes that the ledger may die at.
const SYNC_COMMITS: u32 = 2;

/// A transport outcome in a form the event queue can order.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Delivered {
    Offline,
    Timeout,
    Http { status: u16, body: String },
}

impl Delivered {
    fn outcome(&self) -> TransportOutcome {
        match self {
            Delivered::Offline => TransportOutcome::Offline,
            Delivered::Timeout => TransportOutcome::Timeout,
            Delivered::Http { status, body } => TransportOutcome::from_text(*status, body),
        }
    }
}

impl World {
    /// One turn of device `d`'s worker: then the request it sent goes on
    /// the network, and a wake is set for its next timer.
    pub(super) fn turn(&mut self, d: usize) {
        self.devices[d].run(self.now);
        for (request, answer) in self.devices[d].take_requests() {
            let device = &self.devices[d];
            let body = serde_json::to_vec(&request).expect("a request serialises");
            self.next_request += 1;
            let request_id = self.next_request;
            self.stats.requests += 1;
            let generation = device.generation;
            self.devices[d].in_flight = Some((request_id, answer));
            let seqs: Vec<u64> = request.items.iter().map(|i| i.client_seq).collect();
            self.note(format!("HH-{d} sends request {request_id}: seqs {seqs:?}"));
            self.requests.insert(request_id, (d, generation, body));
            self.transmit(d, generation, request_id);
        }
        if let Some(at) = self.devices[d].next_timer() {
            if self.devices[d].wake_at.is_none_or(|w| at < w) {
                self.devices[d].wake_at = Some(at);
                let generation = self.devices[d].generation;
                self.schedule(at.0 - self.now.0, Event::Wake(d, generation));
            }
        }
    }

    /// The network's share of one request.
    fn transmit(&mut self, d: usize, generation: u64, request_id: u64) {
        let faults = !self.healed;
        if faults && self.partitioned {
            let outcome = if self.rng.random_bool(0.5) {
                (Delivered::Offline, self.rng.random_range(1..50))
            } else {
                (Delivered::Timeout, REQUEST_TIMEOUT_MS)
            };
            self.answer(d, generation, request_id, outcome.1, outcome.0);
            return;
        }
        if faults && self.rng.random_bool(self.shape.drop_request) {
            self.answer(
                d,
                generation,
                request_id,
                REQUEST_TIMEOUT_MS,
                Delivered::Timeout,
            );
            return;
        }
        self.deliver(faults, |answer_lost, duplicate| Event::Arrive {
            device: d,
            generation,
            request_id,
            answer_lost,
            duplicate,
        });
    }

    /// A message the network carries: it arrives 2–200 ms later, its answer
    /// lost at the shape's odds; with faults on, a second copy may arrive up
    /// to 3 s after it, whose answer reaches nobody.
    pub(super) fn deliver(&mut self, faults: bool, arrival: impl Fn(bool, bool) -> Event) {
        let answer_lost = faults && self.rng.random_bool(self.shape.drop_response);
        let delay = self.rng.random_range(2..200);
        self.schedule(delay, arrival(answer_lost, false));
        if faults && self.rng.random_bool(self.shape.duplicate) {
            let later = delay + self.rng.random_range(0..3_000);
            self.schedule(later, arrival(true, true));
        }
    }

    /// A request reaches the ledger: answered, or lost with the ledger.
    pub(super) fn arrive(
        &mut self,
        d: usize,
        generation: u64,
        request_id: u64,
        answer_lost: bool,
        duplicate: bool,
    ) {
        if !self.ledger_up {
            self.answer(d, generation, request_id, 1, Delivered::Offline);
            return;
        }
        let body = self.requests[&request_id].2.clone();
        let token = self.devices[d].token.clone();
        let what = format!("HH-{d} request {request_id}");
        let answer = self.at_ledger(what, SYNC_COMMITS, |ledger, now| {
            ledger.sync(&token, &body, now)
        });
        let Some(answer) = answer else {
            if !duplicate {
                self.answer(
                    d,
                    generation,
                    request_id,
                    REQUEST_TIMEOUT_MS,
                    Delivered::Timeout,
                );
            }
            return;
        };
        self.record_answers(d, request_id, answer.status, &answer.body);
        if duplicate {
            self.note(format!(
                "HH-{d} request {request_id} arrives again (duplicate): {}",
                answer.status
            ));
            return;
        }
        let (after, outcome) = if answer_lost {
            self.note(format!("HH-{d} request {request_id} applied, answer lost"));
            (REQUEST_TIMEOUT_MS, Delivered::Timeout)
        } else {
            (
                self.rng.random_range(2..200),
                Delivered::Http {
                    status: answer.status,
                    body: answer.body,
                },
            )
        };
        self.answer(d, generation, request_id, after, outcome);
    }

    /// Keeps every per-item answer the ledger gave, for the replay check.
    fn record_answers(&mut self, d: usize, request_id: u64, status: u16, body: &str) {
        if status != 200 {
            return;
        }
        let response: SyncResponse = serde_json::from_str(body).expect("the ledger answers JSON");
        for result in response.results {
            if result.outcome == Some(ItemOutcome::Buffered) {
                continue;
            }
            self.answers.push(Answer {
                device: d,
                request_id,
                result,
            });
        }
    }

    /// The transport's outcome reaches device `d`'s worker `after` ms from now.
    fn answer(
        &mut self,
        d: usize,
        generation: u64,
        request_id: u64,
        after: i64,
        outcome: Delivered,
    ) {
        self.schedule(
            after,
            Event::Outcome {
                device: d,
                generation,
                request_id,
                outcome,
            },
        );
    }

    /// An outcome reaches device `d`: its worker takes it if it is the
    /// same worker life and still waits for that request.
    pub(super) fn outcome(
        &mut self,
        d: usize,
        generation: u64,
        request_id: u64,
        outcome: Delivered,
    ) {
        let current = &self.devices[d];
        let live = current.generation == generation
            && current
                .in_flight
                .as_ref()
                .is_some_and(|(id, _)| *id == request_id);
        if live {
            self.note(format!(
                "HH-{d} request {request_id}: {}",
                describe(&outcome)
            ));
            if let Some((_, answer)) = self.devices[d].in_flight.take() {
                let _ = answer.send(outcome.outcome());
            }
            self.turn(d);
        }
    }
}

fn describe(outcome: &Delivered) -> String {
    match outcome {
        Delivered::Offline => "offline".into(),
        Delivered::Timeout => "timed out".into(),
        Delivered::Http { status, body } if *status == 200 => {
            let response: SyncResponse = serde_json::from_str(body).expect("JSON");
            let parts: Vec<String> = response
                .results
                .iter()
                .map(|r| {
                    let what = r
                        .outcome
                        .map(|o| format!("{o:?}").to_lowercase())
                        .or_else(|| r.code.clone())
                        .unwrap_or_default();
                    match &r.reason {
                        Some(reason) => format!("#{} {} {what} ({reason})", r.client_seq, r.status),
                        None => format!("#{} {} {what}", r.client_seq, r.status),
                    }
                })
                .collect();
            format!("200 [{}]", parts.join(", "))
        }
        Delivered::Http { status, body } => format!("{status} {body}"),
    }
}
