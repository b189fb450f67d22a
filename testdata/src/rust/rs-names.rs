// rs-names: Rust names for demangling (testdata/cases/rust-legacy and
// rust-v0 run it, built with legacy and with v0 symbol mangling).
//   main -> run -> shapes::total_area -> <dyn Shape>::area (a dyn call into
//                  <shapes::Square as shapes::Shape>::area)
//               -> calc::fold_mixed::<u64> and calc::fold_mixed::<[u32; 4]>
//                  -> a closure given to Iterator::map -> <T as calc::Mix>::mix
// The argument is the run time in seconds (default 0.2).  Functions that
// must show up as frames are #[inline(never)]; the closure (a closure takes
// no attributes on stable Rust) is kept out of line by its size and by its
// two callers, and inline expansion shows it where it is inlined anyway.
use std::ptr;
use std::time::{Duration, Instant};

mod shapes {
    pub trait Shape {
        fn area(&self, n: u32) -> f64;
    }

    pub struct Square {
        pub side: f64,
    }

    impl Shape for Square {
        #[inline(never)]
        fn area(&self, n: u32) -> f64 {
            let mut a = 0.0;
            for i in 0..n {
                a += self.side * self.side + f64::from(i);
            }
            a
        }
    }

    #[inline(never)]
    pub fn total_area(shapes: &[Box<dyn Shape>], n: u32) -> f64 {
        shapes.iter().map(|s| s.area(n)).sum()
    }
}

mod calc {
    pub trait Mix: Copy {
        fn mix(self, round: u32) -> Self;
        fn widen(self) -> u64;
    }

    impl Mix for u64 {
        #[inline(never)]
        fn mix(self, round: u32) -> u64 {
            let mut x = self ^ u64::from(round);
            for _ in 0..16 {
                x = x.rotate_left(7).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            }
            x
        }
        fn widen(self) -> u64 {
            self
        }
    }

    // an array type: its name has a ';' ("[u32; 4]"), which folded
    // output must turn into ':'
    impl Mix for [u32; 4] {
        #[inline(never)]
        fn mix(self, round: u32) -> [u32; 4] {
            let mut v = self;
            for _ in 0..16 {
                for k in 0..4 {
                    v[k] = (v[k] ^ round).rotate_left(5).wrapping_mul(2_654_435_761);
                }
                v.rotate_left(1);
            }
            v
        }
        fn widen(self) -> u64 {
            self.iter().fold(0u64, |a, &b| a.wrapping_mul(31).wrapping_add(u64::from(b)))
        }
    }

    #[inline(never)]
    pub fn fold_mixed<T: Mix>(items: &[T], round: u32) -> u64 {
        let mut step = |x: &T| -> u64 {
            let mut acc = 0u64;
            let mut y = *x;
            for r in 0..4 {
                y = y.mix(round.wrapping_add(r));
                acc = acc.rotate_left(9) ^ y.widen();
            }
            acc
        };
        let head: u64 = items.iter().take(items.len() / 2).map(&mut step).sum();
        let tail = items.iter().skip(items.len() / 2).map(&mut step).fold(0u64, u64::wrapping_add);
        head.wrapping_add(tail)
    }
}

static mut SINK: u64 = 0;

#[inline(never)]
fn run(secs: f64) {
    let shapes: Vec<Box<dyn shapes::Shape>> = vec![
        Box::new(shapes::Square { side: 1.5 }),
        Box::new(shapes::Square { side: 2.5 }),
    ];
    let words: Vec<u64> = (0..256u64).collect();
    let quads: Vec<[u32; 4]> = (0..128u32).map(|i| [i, i + 1, i * 3, !i]).collect();
    let end = Instant::now() + Duration::from_secs_f64(secs);
    let mut round = 0u32;

    while Instant::now() < end {
        let a = shapes::total_area(&shapes, 2000);
        let b = calc::fold_mixed(&words, round);
        let c = calc::fold_mixed(&quads, round);
        // volatile: the results are used, so the work is not optimised away
        unsafe {
            let s = ptr::read_volatile(&SINK);
            ptr::write_volatile(&mut SINK, s ^ a.to_bits() ^ b ^ c);
        }
        round = round.wrapping_add(1);
    }
}

fn main() {
    let secs = std::env::args()
        .nth(1)
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|&s| s > 0.0)
        .unwrap_or(0.2);
    run(secs);
}
