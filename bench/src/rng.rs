//! A small xorshift generator, so generated inputs are the same on every
//! machine without a dependency.

pub struct Rng(u64);

impl Rng {
    /// A zero seed would stay zero forever, so it becomes 1.
    pub fn new(seed: u64) -> Self {
        Self(seed.max(1))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub fn below(&mut self, bound: u64) -> u64 {
        self.next_u64() % bound
    }
}
