//! The wasm module's memory allocator: power-of-two size classes, each a
//! free list, over memory the module grows by whole pages.
//!
//! It replaces the standard library's dlmalloc in the shipped module
//! (about 8 KB of it, against the module's size target) and is small
//! enough to read in one sitting:
//!
//! * a request of `size` bytes aligned to `align` takes a block of the
//!   next power of two of `max(size, align, MIN_BLOCK)` bytes, its class;
//! * a freed block goes to the front of its class's free list (the list's
//!   link lives in the block itself) and is the next one its class hands
//!   out, so allocation and release are constant time;
//! * a class with no free block cuts a new one from the current region,
//!   aligned to its size (or to a page, for blocks a page or larger), and
//!   a region that is too short grows memory by whole pages.
//!
//! The trade: blocks never merge or split, so memory freed in one class
//! serves only that class, and rounding up wastes under half of each
//! block. The worker's heap is small (a backlog of 10,000 items is a few
//! megabytes) and lives as long as the worker, which the browser stops
//! when idle; constant-time capture paths matter more there than packing.
//!
//! The arithmetic is plain Rust over a [`Grow`] source, so the native
//! tests drive it over an arena with random allocation sequences; the
//! wasm build plugs in `memory.grow` (see `web::heap`).

use std::alloc::Layout;
use std::ptr::null_mut;

/// WebAssembly's page: memory grows by whole pages of 64 KiB.
pub const PAGE: usize = 64 * 1024;
/// The smallest block in bytes: room for the free list's link, and no
/// class for the many tiny allocations to scatter over.
pub const MIN_BLOCK: usize = 16;
/// The largest alignment served, in bytes: a page, what fresh memory is
/// aligned to. A larger one is refused (null), as `GlobalAlloc` allows.
pub const MAX_ALIGN: usize = PAGE;
/// Size classes: class `k` holds blocks of `2^k` bytes.
const CLASSES: usize = usize::BITS as usize;

/// Where new memory comes from.
pub trait Grow {
    /// Adds `pages` pages of memory and returns the address of the first
    /// (page-aligned), or `None` when there is no more.
    fn grow(&mut self, pages: usize) -> Option<usize>;
}

/// The allocator's state: one free list per class and the region new
/// blocks are cut from.
pub struct SizeClasses<G> {
    /// The first free block of each class (0: none). Each free block's
    /// first word holds the address of the next.
    free: [usize; CLASSES],
    /// The unused part of the current region: `next..end`.
    next: usize,
    end: usize,
    grow: G,
}

/// The class that serves `layout`, or `None` for a request no block can
/// serve (alignment beyond [`MAX_ALIGN`], or a size near the address
/// space).
fn class_of(layout: Layout) -> Option<usize> {
    if layout.align() > MAX_ALIGN {
        return None;
    }
    let size = layout.size().max(layout.align()).max(MIN_BLOCK);
    let block = size.checked_next_power_of_two()?;
    Some(block.trailing_zeros() as usize)
}

impl<G: Grow> SizeClasses<G> {
    pub const fn new(grow: G) -> SizeClasses<G> {
        SizeClasses {
            free: [0; CLASSES],
            next: 0,
            end: 0,
            grow,
        }
    }

    /// A block for `layout`, or null when memory cannot grow.
    ///
    /// # Safety
    /// The memory [`Grow`] hands out must be this allocator's alone.
    pub unsafe fn alloc(&mut self, layout: Layout) -> *mut u8 {
        let Some(class) = class_of(layout) else {
            return null_mut();
        };
        let head = self.free[class];
        if head != 0 {
            // SAFETY: `head` is a free block of this class: this allocator
            // wrote its link when the block was released.
            self.free[class] = unsafe { *(head as *const usize) };
            return head as *mut u8;
        }
        self.cut(1 << class)
    }

    /// Cuts a new block of `size` bytes (a power of two) from the region,
    /// growing it when it is too short.
    fn cut(&mut self, size: usize) -> *mut u8 {
        let align = size.min(PAGE);
        let fits = |next: usize, end: usize| {
            let start = next.checked_add(align - 1)? & !(align - 1);
            (start.checked_add(size)? <= end).then_some(start)
        };
        if let Some(start) = fits(self.next, self.end) {
            self.next = start + size;
            return start as *mut u8;
        }
        // Enough pages for the block and its alignment slack, whether or
        // not the new pages follow the region on.
        let Some(bytes) = size.checked_add(align) else {
            return null_mut();
        };
        let pages = bytes.div_ceil(PAGE);
        let Some(start) = self.grow.grow(pages) else {
            return null_mut();
        };
        // Memory that would end past the address space serves nothing.
        let Some(grown_end) = pages
            .checked_mul(PAGE)
            .and_then(|len| start.checked_add(len))
        else {
            return null_mut();
        };
        if start != self.end {
            // Not contiguous: what was left of the old region is dropped.
            self.next = start;
        }
        self.end = grown_end;
        match fits(self.next, self.end) {
            Some(start) => {
                self.next = start + size;
                start as *mut u8
            }
            None => null_mut(),
        }
    }

    /// Releases a block.
    ///
    /// # Safety
    /// `ptr` came from this allocator for `layout`, and is not used again.
    pub unsafe fn dealloc(&mut self, ptr: *mut u8, layout: Layout) {
        let Some(class) = class_of(layout) else {
            return;
        };
        // SAFETY: the block is at least MIN_BLOCK bytes, aligned for a
        // word, and no longer in use: its first word becomes the link.
        unsafe { *(ptr as *mut usize) = self.free[class] };
        self.free[class] = ptr as usize;
    }

    /// Resizes a block: the same block while the new size stays in its
    /// class, else a new block with the contents copied.
    ///
    /// # Safety
    /// As [`SizeClasses::dealloc`]; `new_size` rounded up to `layout`'s
    /// alignment does not overflow.
    pub unsafe fn realloc(&mut self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller guarantees the size and alignment are valid.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        if class_of(new_layout) == class_of(layout) {
            return ptr;
        }
        // SAFETY: as the caller's, for the new layout.
        let moved = unsafe { self.alloc(new_layout) };
        if !moved.is_null() {
            // SAFETY: both blocks hold at least the smaller size, and a
            // block of another class never overlaps this one.
            unsafe {
                std::ptr::copy_nonoverlapping(ptr, moved, layout.size().min(new_size));
                self.dealloc(ptr, layout);
            }
        }
        moved
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// Pages of one real, page-aligned arena, handed out in order (or with
    /// a page skipped, to make the next region not follow on).
    struct Arena {
        base: *mut u8,
        pages: usize,
        used: usize,
        skip_next: bool,
    }

    impl Arena {
        fn new(pages: usize) -> Arena {
            let layout = Layout::from_size_align(pages * PAGE, PAGE).unwrap();
            // SAFETY: a non-zero size.
            let base = unsafe { std::alloc::alloc(layout) };
            assert!(!base.is_null());
            Arena {
                base,
                pages,
                used: 0,
                skip_next: false,
            }
        }
    }

    impl Drop for Arena {
        fn drop(&mut self) {
            let layout = Layout::from_size_align(self.pages * PAGE, PAGE).unwrap();
            // SAFETY: allocated in `new` with this layout.
            unsafe { std::alloc::dealloc(self.base, layout) };
        }
    }

    impl Grow for Arena {
        fn grow(&mut self, pages: usize) -> Option<usize> {
            if std::mem::take(&mut self.skip_next) {
                self.used += 1;
            }
            if self.used + pages > self.pages {
                return None;
            }
            let start = self.base as usize + self.used * PAGE;
            self.used += pages;
            Some(start)
        }
    }

    fn layout(size: usize, align: usize) -> Layout {
        Layout::from_size_align(size, align).unwrap()
    }

    #[test]
    fn classes_round_up_to_a_power_of_two_of_at_least_min_block() {
        assert_eq!(class_of(layout(1, 1)), Some(4));
        assert_eq!(class_of(layout(16, 8)), Some(4));
        assert_eq!(class_of(layout(17, 1)), Some(5));
        assert_eq!(class_of(layout(3, 64)), Some(6));
        assert_eq!(class_of(layout(PAGE + 1, 8)), Some(17));
        assert_eq!(class_of(layout(8, MAX_ALIGN * 2)), None);
    }

    #[test]
    fn a_released_block_is_the_next_its_class_hands_out() {
        let mut heap = SizeClasses::new(Arena::new(4));
        unsafe {
            let a = heap.alloc(layout(24, 8));
            let b = heap.alloc(layout(30, 8));
            assert_ne!(a, b);
            heap.dealloc(a, layout(24, 8));
            assert_eq!(heap.alloc(layout(32, 4)), a);
            assert_ne!(heap.alloc(layout(100, 8)), a);
        }
    }

    #[test]
    fn growing_past_the_end_of_memory_answers_null_and_keeps_what_was_given() {
        let mut heap = SizeClasses::new(Arena::new(3));
        unsafe {
            let big = heap.alloc(layout(2 * PAGE, 8));
            assert!(!big.is_null());
            big.write_bytes(0xAB, 2 * PAGE);
            assert!(heap.alloc(layout(2 * PAGE, 8)).is_null());
            let small = heap.alloc(layout(64, 8));
            assert!(!small.is_null());
            assert_eq!(*big.add(2 * PAGE - 1), 0xAB);
        }
    }

    /// Pages at the very top of the address space.
    struct Top;

    impl Grow for Top {
        fn grow(&mut self, _pages: usize) -> Option<usize> {
            Some(usize::MAX & !(PAGE - 1))
        }
    }

    #[test]
    fn memory_that_would_end_past_the_address_space_answers_null() {
        let mut heap = SizeClasses::new(Top);
        unsafe {
            assert!(heap.alloc(layout(PAGE, 8)).is_null());
            assert!(heap.alloc(layout(64, 8)).is_null());
        }
    }

    #[test]
    fn a_region_that_does_not_follow_on_starts_fresh() {
        let mut heap = SizeClasses::new(Arena::new(8));
        unsafe {
            let first = heap.alloc(layout(PAGE / 2, 8)) as usize;
            heap.grow.skip_next = true;
            let second = heap.alloc(layout(PAGE, 8)) as usize;
            assert_eq!(second % PAGE, 0);
            assert!(second >= first + PAGE / 2);
        }
    }

    #[test]
    fn realloc_keeps_the_block_within_its_class_and_the_contents_across_classes() {
        let mut heap = SizeClasses::new(Arena::new(4));
        unsafe {
            let a = heap.alloc(layout(40, 8));
            for i in 0..40 {
                *a.add(i) = i as u8;
            }
            assert_eq!(heap.realloc(a, layout(40, 8), 64), a);
            let moved = heap.realloc(a, layout(64, 8), 1000);
            assert_ne!(moved, a);
            for i in 0..40 {
                assert_eq!(*moved.add(i), i as u8);
            }
        }
    }

    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Op {
        Alloc { size: usize, align_log: u32 },
        Free(usize),
        Realloc(usize, usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => (1usize..5_000, 0u32..8).prop_map(|(size, align_log)| Op::Alloc { size, align_log }),
            1 => (1usize..200_000, 0u32..4).prop_map(|(size, align_log)| Op::Alloc { size, align_log }),
            2 => any::<usize>().prop_map(Op::Free),
            2 => (any::<usize>(), 1usize..20_000).prop_map(|(at, size)| Op::Realloc(at, size)),
        ]
    }

    proptest! {
        /// Any sequence of allocations, releases and resizes: every block
        /// is aligned, no two live blocks overlap, and each keeps what was
        /// written into it until it is released.
        #[test]
        fn live_blocks_are_aligned_disjoint_and_keep_their_contents(
            ops in proptest::collection::vec(op(), 1..300)
        ) {
            let mut heap = SizeClasses::new(Arena::new(256));
            // address -> (layout, fill byte)
            let mut live: BTreeMap<usize, (Layout, u8)> = BTreeMap::new();
            let mut tag = 0u8;
            let check = |live: &BTreeMap<usize, (Layout, u8)>, at: usize| {
                let (layout, fill) = live[&at];
                let bytes = unsafe { std::slice::from_raw_parts(at as *const u8, layout.size()) };
                bytes.iter().all(|b| *b == fill)
            };
            for op in ops {
                match op {
                    Op::Alloc { size, align_log } => {
                        let layout = layout(size, 1 << align_log);
                        let ptr = unsafe { heap.alloc(layout) };
                        if ptr.is_null() { continue; }
                        let at = ptr as usize;
                        prop_assert_eq!(at % layout.align(), 0);
                        if let Some((&before, (l, _))) = live.range(..at).next_back() {
                            prop_assert!(before + l.size() <= at, "overlaps the block before");
                        }
                        if let Some((&after, _)) = live.range(at..).next() {
                            prop_assert!(at + size <= after, "overlaps the block after");
                        }
                        tag = tag.wrapping_add(1);
                        unsafe { ptr.write_bytes(tag, size) };
                        live.insert(at, (layout, tag));
                    }
                    Op::Free(pick) => {
                        if live.is_empty() { continue; }
                        let at = *live.keys().nth(pick % live.len()).unwrap();
                        prop_assert!(check(&live, at), "contents changed before release");
                        let (layout, _) = live.remove(&at).unwrap();
                        unsafe { heap.dealloc(at as *mut u8, layout) };
                    }
                    Op::Realloc(pick, size) => {
                        if live.is_empty() { continue; }
                        let at = *live.keys().nth(pick % live.len()).unwrap();
                        prop_assert!(check(&live, at), "contents changed before resize");
                        let (old, fill) = live.remove(&at).unwrap();
                        let ptr = unsafe { heap.realloc(at as *mut u8, old, size) };
                        if ptr.is_null() {
                            live.insert(at, (old, fill));
                            continue;
                        }
                        let kept = old.size().min(size);
                        let bytes = unsafe { std::slice::from_raw_parts(ptr, kept) };
                        prop_assert!(bytes.iter().all(|b| *b == fill), "contents lost in resize");
                        prop_assert_eq!(ptr as usize % old.align(), 0);
                        unsafe { ptr.write_bytes(fill, size) };
                        let new = layout(size, old.align());
                        let at = ptr as usize;
                        if let Some((&before, (l, _))) = live.range(..at).next_back() {
                            prop_assert!(before + l.size() <= at);
                        }
                        if let Some((&after, _)) = live.range(at..).next() {
                            prop_assert!(at + size <= after);
                        }
                        live.insert(at, (new, fill));
                    }
                }
            }
            for at in live.keys().copied().collect::<Vec<_>>() {
                prop_assert!(check(&live, at));
            }
        }
    }
}
