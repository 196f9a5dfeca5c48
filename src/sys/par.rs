//! Parallel work: one thread per core, results in order.

/// How many threads CPU-bound work runs on: one per core.
pub(crate) fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Runs `job(0)..job(n - 1)` on up to `threads` threads; results in order.
pub(crate) fn par_map<T: Send>(
    n: usize,
    threads: usize,
    job: impl Fn(usize) -> T + Sync,
) -> Vec<T> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut out: Vec<(usize, T)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads.clamp(1, n.max(1)))
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if i >= n {
                            break done;
                        }
                        done.push((i, job(i)));
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    out.sort_by_key(|(i, _)| *i);
    out.into_iter().map(|(_, t)| t).collect()
}

/// Runs `job` on every item of `items` on all cores, a chunk at a time, and
/// hands the results to `each` in the items' order: what it holds never
/// grows past one chunk, however long `items` is.
pub(crate) fn par_each<T: Sync, R: Send>(
    mut items: impl Iterator<Item = T>,
    job: impl Fn(&T) -> R + Sync,
    mut each: impl FnMut(R),
) {
    const CHUNK: usize = 256;
    loop {
        let chunk: Vec<T> = items.by_ref().take(CHUNK).collect();
        if chunk.is_empty() {
            return;
        }
        par_map(chunk.len(), cores(), |i| job(&chunk[i]))
            .into_iter()
            .for_each(&mut each);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn par_each_keeps_the_order_across_chunks() {
        let mut got = Vec::new();
        super::par_each(0..1000u32, |n| n * 2, |r| got.push(r));
        assert_eq!(got, (0..1000u32).map(|n| n * 2).collect::<Vec<_>>());
        let mut none: Vec<u32> = Vec::new();
        super::par_each(std::iter::empty::<u32>(), |n| *n, |r| none.push(r));
        assert!(none.is_empty());
    }
}
