// The commit queue: one line of commit steps per store.
//
// Every backend is synchronous, so a commit step (the core's commit, then
// adopt, then the flush) runs inside one JS turn: with an idle queue it runs
// inside the call that asked for it, and `adopt` has run before `commit`
// returns. A step asked for while a step runs (from an adopt hook, say) is
// queued and runs right after the current one, in order. One loop drains the
// queue, so commit order, seq order and adoption order are one order. A hold
// (store.read, store.export) stops the loop between steps until it is
// released; a place (a restore preparing its files) keeps the steps after it
// waiting, and its own commit waits for the holds too. A read or an export
// takes its hold in turn (holdInTurn): behind the steps queued before it,
// so that reads that overlap one another cannot keep a commit waiting for
// ever (each new read used to join the holds at once, and two pollers kept
// them on for as long as they ran).

/**
 * A commit queue. `flush(seq, ops)` runs at the end of every step that
 * committed, after its adopt (js/live.js); `ops` is the commit's lazy ops.
 *
 * @example
 * const queue = makeCommitQueue({ flush: (seq, ops) => live.flush(seq, ops) });
 * const seq = await queue.step(() => gate.commit("c", () => core.commit(t, m)), (seq, ops) => hook(seq, ops()));
 */
export function makeCommitQueue({ flush }) {
  const queue = [];
  let running = false;
  // hold()s not yet released: nothing commits while there is one.
  let holds = 0;
  // Places taken and not yet ended: the queue's steps wait behind them.
  let places = 0;
  // A place's commit asked for while a hold was on: it runs, ahead of the
  // queue, once the last hold is released.
  const placed = [];

  function drain() {
    if (running) return;
    running = true;
    try {
      for (;;) {
        if (holds === 0 && placed.length > 0) placed.shift()();
        // A hold taken in turn at the head of the line goes on beside the
        // holds already on: reads queued one after another run together.
        else if (places === 0 && queue.length > 0 && (holds === 0 || (queue[0].hold && placed.length === 0))) queue.shift()();
        else break;
      }
    } finally {
      running = false;
    }
  }

  // One step: the commit, its adopt, the flush. Returns the seq; throws
  // the commit's error (nothing else ran) or adopt's (after the flush).
  function runStep(commit, adopt) {
    const done = commit();
    let threw = false;  // not the thrown value's truth: `throw undefined` throws too
    let failed;
    try {
      if (adopt) adopt(done.seq, done.ops);
    } catch (e) {
      threw = true;
      failed = e;
    }
    flush(done.seq, done.ops);
    if (threw) throw failed;
    return done.seq;
  }

  return {
    /**
     * Queues one commit step. `commit()` makes the commit and returns
     * { seq, ops } (ops: a function giving the commit's ops); a throw
     * rejects the step and nothing else runs. `adopt(seq, ops)` runs right
     * after, inside the step; then the flush. Resolves to the seq, or
     * rejects with adopt's error (the commit stays: it is durable).
     */
    step(commit, adopt) {
      if (!running && holds === 0 && places === 0 && queue.length === 0) {
        // An idle queue: the step runs now, in this call, as drain() would
        // run it, without a Promise executor and a queued closure (issue 13,
        // the commit's fixed cost); steps that its adopt hook or the flush
        // asked for run right after it.
        running = true;
        let answer;
        try {
          answer = Promise.resolve(runStep(commit, adopt));
        } catch (e) {
          answer = Promise.reject(e);
        } finally {
          running = false;
        }
        drain();
        return answer;
      }
      return new Promise((resolve, reject) => {
        queue.push(() => {
          let seq;
          try {
            seq = runStep(commit, adopt);
          } catch (e) {
            reject(e);
            return;
          }
          resolve(seq);
        });
        drain();
      });
    },
    /**
     * Queues `fn` as a step that commits nothing; resolves to its value once
     * every step queued before it has run.
     */
    after(fn) {
      return new Promise((resolve, reject) => {
        queue.push(() => {
          try {
            resolve(fn());
          } catch (e) {
            reject(e);
          }
        });
        drain();
      });
    },
    /**
     * Takes a place in the line now, for a step whose commit is not ready
     * yet (a restore or a snapshot first prepares its files): resolves,
     * once every step queued before it has run, to a slot, and the steps
     * queued after it wait until `slot.step(commit, adopt)` (as step()),
     * `slot.run(fn)` (as after()) or `slot.skip()` ends it. Each call
     * keeps its place in the commit order, however long its files take.
     * A hold taken meanwhile (an export, a store.read) holds the slot's
     * commit too: it runs once the last hold is released, so the held
     * reads see the store as it was when they began.
     */
    place() {
      return new Promise((resolve) => {
        queue.push(() => {
          places++;
          let open = true;
          const end = () => {
            if (!open) return;
            open = false;
            places--;
            drain();
          };
          const commitNow = (commit, adopt) => {
            try {
              return runStep(commit, adopt);
            } finally {
              end();
            }
          };
          resolve({
            step(commit, adopt) {
              if (holds === 0) {
                try {
                  return Promise.resolve(commitNow(commit, adopt));
                } catch (e) {
                  return Promise.reject(e);
                }
              }
              return new Promise((resolve, reject) => {
                placed.push(() => {
                  try {
                    resolve(commitNow(commit, adopt));
                  } catch (e) {
                    reject(e);
                  }
                });
              });
            },
            run(fn) {
              try {
                return Promise.resolve(fn());
              } catch (e) {
                return Promise.reject(e);
              } finally {
                end();
              }
            },
            skip: end,
          });
        });
        drain();
      });
    },
    /**
     * A hold taken in its turn (store.read, store.export): `{ ready,
     * release }`. With no step waiting it is on at once (ready: null);
     * else `ready` resolves once the steps queued before it have run, and
     * the steps queued after it wait for it. `now` takes it at once all
     * the same: a read inside a read (the outer one awaits it, and the
     * steps it would wait for wait for the outer one). While a place is
     * open (a restore preparing its files) it is on at once too: the steps
     * behind the place wait for it anyway, and the place's commit waits for
     * the holds (docs/api.md: a restore asked for before a read commits
     * after it). release() ends it, or gives up the turn not yet come; a
     * second call does nothing.
     */
    holdInTurn(now = false) {
      let on = false;
      let ended = false;
      const release = () => {
        if (ended) return;
        ended = true;
        if (!on) return;  // its entry, when reached, takes nothing
        holds--;
        drain();
      };
      if (now || placed.length === 0 && (queue.length === 0 || places > 0)) {
        holds++;
        on = true;
        return { ready: null, release };
      }
      const ready = new Promise((resolve) => {
        const entry = () => {
          if (!ended) {
            holds++;
            on = true;
          }
          resolve();
        };
        entry.hold = true;
        queue.push(entry);
        drain();
      });
      return { ready, release };
    },
    /** Stops the loop between steps until release(). Holds nest. */
    hold() {
      holds++;
    },
    /** Whether a hold is on. */
    get held() {
      return holds > 0;
    },
    /** Ends one hold; the queued steps run when none is left. */
    release() {
      holds--;
      drain();
    },
    /** The number of steps waiting. */
    get waiting() {
      return queue.length;
    },
  };
}
