//! The module's global allocator: [`crate::heap::SizeClasses`] over
//! `memory.grow`, in place of the standard library's dlmalloc.

use std::alloc::{GlobalAlloc, Layout};
use std::cell::UnsafeCell;

use crate::heap::{Grow, SizeClasses, PAGE};

/// Grows the module's linear memory.
pub struct LinearMemory;

impl Grow for LinearMemory {
    fn grow(&mut self, pages: usize) -> Option<usize> {
        let before = core::arch::wasm32::memory_grow(0, pages);
        (before != usize::MAX).then(|| before * PAGE)
    }
}

/// The allocator behind a cell: the module runs on one thread (it is built
/// without the `atomics` feature), and no allocation calls back into it.
pub struct Heap(UnsafeCell<SizeClasses<LinearMemory>>);

// SAFETY: wasm32 without the `atomics` feature has one thread, so the
// cell is never reached from two at once.
unsafe impl Sync for Heap {}

#[global_allocator]
static HEAP: Heap = Heap(UnsafeCell::new(SizeClasses::new(LinearMemory)));

// SAFETY: `SizeClasses` hands out disjoint blocks aligned as asked (its
// native tests check this on random sequences), from memory only it grows.
unsafe impl GlobalAlloc for Heap {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: one thread, and the allocator does not re-enter itself.
        unsafe { (*self.0.get()).alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as `alloc`; the caller's contract is `SizeClasses`'s.
        unsafe { (*self.0.get()).dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as `dealloc`.
        unsafe { (*self.0.get()).realloc(ptr, layout, new_size) }
    }
}
