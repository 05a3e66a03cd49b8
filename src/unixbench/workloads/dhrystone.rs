//! Dhrystone 2.1 — UnixBench's "Dhrystone 2 using register variables" (`dhry2reg`).
//!
//! # What it is
//! Reinhold P. Weicker's synthetic integer benchmark (version 2.1, 1988), in the form the BYTE
//! UNIX Benchmarks build from `dhry_1.c` + `dhry_2.c` with `-DREG=register`: records reached
//! through pointers (`Rec_Type` with its `variant` union), a 50-element and a 50×50 global `int`
//! array, 30-character strings, procedures `Proc_1`..`Proc_8` and functions `Func_1`..`Func_3`.
//! This file ports that program statement by statement; the C names are kept in the comments.
//!
//! # The loop
//! One Dhrystone loop is the body of the `for (Run_Index = 1; ; ++Run_Index)` loop of
//! `dhry_1.c`: `Proc_5`, `Proc_4`, `Int_1_Loc = 2`, `Int_2_Loc = 3`, a `strcpy` of
//! "DHRYSTONE PROGRAM, 2'ND STRING" into `Str_2_Loc`, `Enum_Loc = Ident_2`,
//! `Bool_Glob = !Func_2(Str_1_Loc, Str_2_Loc)` (which ends in a `strcmp` of the two 30-character
//! strings), the `while (Int_1_Loc < Int_2_Loc)` loop with `Proc_7` (executed once),
//! `Proc_8` on the global arrays, `Proc_1(Ptr_Glob)` with its record assignment
//! `*Ptr_Glob->Ptr_Comp = *Ptr_Glob`, the `'A'..=Ch_2_Glob` loop calling `Func_1` (twice),
//! the integer arithmetic (`*`, `/`, `-`) and `Proc_2`. UnixBench never stops the loop itself:
//! `SIGALRM` after the duration prints `COUNT|<Run_Index>|1|lps` and exits. Here [`run`] checks a
//! stop flag once per loop (one `Relaxed` load) and returns the number of *completed* loops
//! (UnixBench prints `Run_Index`, the number of the loop in progress, i.e. one more).
//!
//! # Unit and baseline
//! The score is **lps = Dhrystone loops per second** over the elapsed wall time (timebase 1),
//! not DMIPS (DMIPS = lps / 1757, the VAX 11/780's Dhrystones per second). Index baseline:
//! **116700 lps**, report name "Dhrystone 2 using register variables" (unixbench spec §4.1).
//!
//! # How this Rust build differs from UnixBench's `gcc -O3 -ffast-math -march=native`
//! Dhrystone is notoriously compiler-sensitive, so scores are comparable between patchbench
//! runs (base vs patched, same binary) but not to the last digit with a gcc-built UnixBench.
//! On the machine this was written on (2-core AMD EPYC VM, shared; gcc 12.2, rustc 1.95) the
//! two gave the same lps within the noise, 33–38 million, although this build executes about
//! 270 instructions per loop against gcc's 173 (valgrind counts).
//! * **Translation units.** `dhry_2.c` (`Proc_6`, `Proc_7`, `Proc_8`, `Func_1`, `Func_2`,
//!   `Func_3`) is a separate translation unit and UnixBench builds without LTO, so gcc cannot
//!   inline those into `main`: every loop makes real calls to `Func_2`, `Proc_7` (three times),
//!   `Proc_8`, `Func_1` (twice) and `Proc_6` (once from `Proc_1`). We keep that call structure
//!   with `#[inline(never)]` on those entry points, while `Func_1` inside `Func_2` and `Func_3`
//!   inside `Proc_6` are inlined as gcc does within `dhry_2.c`. `Proc_1`..`Proc_5` (in
//!   `dhry_1.c`, like `main`) are left to LLVM's inliner (both compilers inline all but
//!   `Proc_1`). LLVM still sees the bodies and all callers of the non-inlined functions, which
//!   gcc cannot across translation units: e.g. it specialises `Proc_8` for its only argument
//!   values (`Int_1_Par_Val` = 3), so its indices are constants.
//! * **Dead code in the C build.** UnixBench compiles the final printout out (`SELF_TIMED` is
//!   not defined), so in C the values of `Int_1_Loc` and `Int_2_Loc` at the end of a loop are
//!   never used and gcc deletes the tail of the loop: `Int_2_Loc * Int_1_Loc`, the division
//!   `Int_2_Loc / Int_3_Loc`, `7 * (...) - Int_1_Loc` and `Proc_2`. We store those locals into the
//!   state after every loop (they feed [`run_loops`]'s [`FinalState`]), so that part of the
//!   published loop really runs here, including an `idiv`; it is a small share of a loop.
//! * **Globals and pointers.** The C globals live in one heap-allocated struct, the two
//!   `malloc`ed records in a two-element array, and `Rec_Pointer` is an index into that array
//!   (`NULL` is a sentinel index). Record accesses are therefore **bounds-checked** (a compare
//!   and a never-taken branch) and cost an index multiplication, where C dereferences a raw
//!   pointer; the division checks for a zero divisor and overflow.
//! * **Strings.** Strings are `[u8; 31]` C strings. `strcpy` copies bytes through the
//!   terminating NUL; as its source is always a literal, LLVM turns it into a fixed 31-byte
//!   move, as gcc does with `strcpy` of a literal. `strcmp` keeps C's semantics (unsigned bytes
//!   up to the first difference or NUL) but, like glibc's generic C implementation, skips equal
//!   NUL-free 8-byte words before finishing byte by byte: the C build calls glibc's vectorised
//!   `strcmp` (about 20 instructions for these strings, equal for 19 bytes), and a plain byte
//!   loop would have taken about 150 instructions, as much as the rest of the loop.
//! * **`black_box`.** All state (globals, records and `main`'s locals) is passed through
//!   [`std::hint::black_box`] once per loop, so the optimiser must assume anything may have
//!   changed between loops and cannot hoist, fold or delete work across iterations (in C the
//!   calls into `dhry_2.c` have the same effect on the globals). `main`'s register locals
//!   (`Int_1_Loc`, `Int_2_Loc`, `Ch_Index`) are Rust locals within a loop, so constant folding
//!   inside one loop (e.g. the `while` that runs once with 2 and 3) matches gcc's. The loop
//!   counter is a register, where UnixBench's `volatile unsigned long Run_Index` is loaded and
//!   stored each loop; our stop check is one relaxed atomic load per loop.
//! * **`register`, `-ffast-math`, `-march=native`.** `register` is ignored by modern compilers;
//!   fast-math does not matter (no floating point); `-march=native` lets gcc use wider vector
//!   moves for the record copy, while our build uses the crate's target settings (baseline
//!   x86-64 unless `-C target-cpu` is set).
//! * `Enumeration` is `#[repr(u32)]` (a C `enum` is an `int`); `Proc_6`'s `switch` is a `match`.

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};

/// `Str_30`: a 30-character C string plus its terminating NUL.
pub type Str30 = [u8; 31];

/// C's `Enumeration` (`Ident_1` = 0 .. `Ident_5` = 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum Enumeration {
    /// `Ident_1` (0)
    Ident1 = 0,
    /// `Ident_2` (1)
    Ident2 = 1,
    /// `Ident_3` (2)
    Ident3 = 2,
    /// `Ident_4` (3)
    Ident4 = 3,
    /// `Ident_5` (4)
    Ident5 = 4,
}

/// Where a record's `Ptr_Comp` points, as reported in [`RecordState`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RecRef {
    /// The record `Ptr_Glob` points to.
    PtrGlob,
    /// The record `Next_Ptr_Glob` points to.
    NextPtrGlob,
    /// `NULL` (never the case after a loop).
    Null,
}

/// The printed fields of one record (`Ptr_Glob->` or `Next_Ptr_Glob->`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordState {
    /// `Ptr_Comp` (C prints an address, "implementation-dependent").
    pub ptr_comp: RecRef,
    /// `Discr`.
    pub discr: Enumeration,
    /// `variant.var_1.Enum_Comp`.
    pub enum_comp: Enumeration,
    /// `variant.var_1.Int_Comp`.
    pub int_comp: i32,
    /// `variant.var_1.Str_Comp`, up to its NUL.
    pub str_comp: String,
}

/// The values Dhrystone prints after its loop ("Final values of the variables used in the
/// benchmark"), plus `Ch_Index`. `dhry_1.c` prints no `Ch_1_Loc`; the one character local of
/// `main`, `Ch_Index`, ends every loop at `'C'` (its loop runs for `'A'` and `'B'`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FinalState {
    /// Loops run.
    pub loops: u64,
    /// `Int_Glob` (should be 5).
    pub int_glob: i32,
    /// `Bool_Glob` (should be true, printed as 1).
    pub bool_glob: bool,
    /// `Ch_1_Glob` (should be `'A'`).
    pub ch_1_glob: u8,
    /// `Ch_2_Glob` (should be `'B'`).
    pub ch_2_glob: u8,
    /// `Arr_1_Glob[8]` (should be 7).
    pub arr_1_glob_8: i32,
    /// `Arr_2_Glob[8][7]` (should be loops + 10).
    pub arr_2_glob_8_7: i32,
    /// `Ptr_Glob->` (Discr 0, Enum_Comp 2, Int_Comp 17, "DHRYSTONE PROGRAM, SOME STRING").
    pub ptr_glob: RecordState,
    /// `Next_Ptr_Glob->` (Discr 0, Enum_Comp 1, Int_Comp 18, "DHRYSTONE PROGRAM, SOME STRING";
    /// `Ptr_Comp` the same as `Ptr_Glob->Ptr_Comp`).
    pub next_ptr_glob: RecordState,
    /// `Int_1_Loc` (should be 5).
    pub int_1_loc: i32,
    /// `Int_2_Loc` (should be 13).
    pub int_2_loc: i32,
    /// `Int_3_Loc` (should be 7).
    pub int_3_loc: i32,
    /// `Ch_Index` after its loop (`'C'`; not printed by Dhrystone).
    pub ch_index: u8,
    /// `Enum_Loc` (should be `Ident_2`, printed as 1).
    pub enum_loc: Enumeration,
    /// `Str_1_Loc` (should be "DHRYSTONE PROGRAM, 1'ST STRING").
    pub str_1_loc: String,
    /// `Str_2_Loc` (should be "DHRYSTONE PROGRAM, 2'ND STRING").
    pub str_2_loc: String,
}

/// Runs Dhrystone loops until `stop` becomes true (checked with one Relaxed load per loop) and
/// returns the number of completed loops.
pub fn run(stop: &AtomicBool) -> u64 {
    let mut m = Machine::new();
    let mut completed: u64 = 0;
    while !stop.load(Ordering::Relaxed) {
        // Run_Index is the number of the loop in progress, as in `for (Run_Index = 1; ...)`.
        m.one_loop(completed + 1);
        completed += 1;
        black_box(&mut *m);
    }
    completed
}

/// Runs exactly `loops` loops and returns the final global state for checking.
pub fn run_loops(loops: u64) -> FinalState {
    let mut m = Machine::new();
    for run_index in 1..=loops {
        m.one_loop(run_index);
        black_box(&mut *m);
    }
    m.final_state(loops)
}

// ------------------------------------------------------------------------------------------
// Data (dhry.h)
// ------------------------------------------------------------------------------------------

/// `Rec_Pointer`: an index into [`Machine::heap`]; [`NULL`] stands for C's `NULL`.
type RecPtr = usize;
/// C's `NULL` for a [`RecPtr`].
const NULL: RecPtr = usize::MAX;

/// `Arr_1_Dim`.
type Arr1 = [i32; 50];
/// `Arr_2_Dim`.
type Arr2 = [[i32; 50]; 50];

/// `variant.var_1` of `Rec_Type`. The C union also has `var_2 { Enumeration E_Comp_2;
/// Str_30 Str_2_Comp; }` and `var_3 { char Ch_1_Comp, Ch_2_Comp; }`, but Dhrystone only ever
/// uses `var_1` (`Discr` is always `Ident_1`). `var_1` is the union's largest member
/// (4 + 4 + 31 bytes), so storing it gives the record the C size and the record assignment in
/// `Proc_1` moves the same bytes.
#[derive(Clone, Copy)]
struct Var1 {
    enum_comp: Enumeration,
    int_comp: i32,
    str_comp: Str30,
}

/// `Rec_Type`.
#[derive(Clone, Copy)]
struct Record {
    ptr_comp: RecPtr,
    discr: Enumeration,
    variant: Var1,
}

/// The global variables of `dhry_1.c`.
struct Globals {
    ptr_glob: RecPtr,
    next_ptr_glob: RecPtr,
    int_glob: i32,
    bool_glob: bool,
    ch_1_glob: u8,
    ch_2_glob: u8,
    arr_1_glob: Arr1,
    arr_2_glob: Arr2,
}

/// The locals of `main` that the loop uses.
struct Locals {
    int_1_loc: i32,
    int_2_loc: i32,
    int_3_loc: i32,
    ch_index: u8,
    enum_loc: Enumeration,
    str_1_loc: Str30,
    str_2_loc: Str30,
}

/// The whole program state: globals, the two `malloc`ed records, `main`'s locals.
struct Machine {
    g: Globals,
    heap: [Record; 2],
    l: Locals,
}

/// Builds a `Str_30` from a 30-character literal at compile time.
const fn str30(s: &[u8; 30]) -> Str30 {
    let mut out = [0u8; 31];
    let mut i = 0;
    while i < 30 {
        out[i] = s[i];
        i += 1;
    }
    out
}

const SOME_STRING: Str30 = str30(b"DHRYSTONE PROGRAM, SOME STRING");
const STRING_1ST: Str30 = str30(b"DHRYSTONE PROGRAM, 1'ST STRING");
const STRING_2ND: Str30 = str30(b"DHRYSTONE PROGRAM, 2'ND STRING");
const STRING_3RD: Str30 = str30(b"DHRYSTONE PROGRAM, 3'RD STRING");

/// `strcpy`: copies bytes up to and including the first NUL.
#[inline(always)]
fn strcpy(dst: &mut Str30, src: &Str30) {
    for (d, &s) in dst.iter_mut().zip(src.iter()) {
        *d = s;
        if s == 0 {
            break;
        }
    }
}

/// `strcmp`: the sign of the first differing byte (as unsigned char) before the first NUL,
/// 0 if the strings are equal. Like glibc's generic C `strcmp` it skips equal, NUL-free 8-byte
/// words a word at a time and finishes byte by byte; a plain byte loop would take 20 steps for
/// Dhrystone's strings (equal for 19 bytes), several times the work of glibc's vectorised
/// `strcmp` that the C build calls.
#[inline(always)]
fn strcmp(s1: &Str30, s2: &Str30) -> i32 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let mut start = 0;
    for (w1, w2) in s1.chunks_exact(8).zip(s2.chunks_exact(8)) {
        let (a, b) = (word(w1), word(w2));
        // `a` has a zero byte exactly when (a - 0x01..01) & !a & 0x80..80 is non-zero.
        if a != b || a.wrapping_sub(ONES) & !a & HIGHS != 0 {
            break;
        }
        start += 8;
    }
    for (&a, &b) in s1[start..].iter().zip(&s2[start..]) {
        if a != b || a == 0 {
            return i32::from(a) - i32::from(b);
        }
    }
    0
}

/// Eight bytes as one machine word (a single load once optimised).
#[inline(always)]
fn word(bytes: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(bytes);
    u64::from_ne_bytes(w)
}

/// A C string (up to its NUL) as a Rust string, for [`FinalState`].
fn c_string(s: &Str30) -> String {
    let end = s.iter().position(|&b| b == 0).unwrap_or(s.len());
    String::from_utf8_lossy(&s[..end]).into_owned()
}

impl Machine {
    /// The initialisations at the top of `main`.
    fn new() -> Box<Machine> {
        let blank = Record {
            ptr_comp: NULL,
            discr: Enumeration::Ident1,
            variant: Var1 {
                enum_comp: Enumeration::Ident1,
                int_comp: 0,
                str_comp: [0; 31],
            },
        };
        let mut m = Box::new(Machine {
            g: Globals {
                ptr_glob: NULL,
                next_ptr_glob: NULL,
                int_glob: 0,
                bool_glob: false,
                ch_1_glob: 0,
                ch_2_glob: 0,
                arr_1_glob: [0; 50],
                arr_2_glob: [[0; 50]; 50],
            },
            heap: [blank; 2],
            l: Locals {
                int_1_loc: 0,
                int_2_loc: 0,
                int_3_loc: 0,
                ch_index: 0,
                enum_loc: Enumeration::Ident1,
                str_1_loc: [0; 31],
                str_2_loc: [0; 31],
            },
        });
        // Next_Ptr_Glob = malloc(...); Ptr_Glob = malloc(...);
        m.g.next_ptr_glob = 1;
        m.g.ptr_glob = 0;
        let p = m.g.ptr_glob;
        m.heap[p].ptr_comp = m.g.next_ptr_glob;
        m.heap[p].discr = Enumeration::Ident1;
        m.heap[p].variant.enum_comp = Enumeration::Ident3;
        m.heap[p].variant.int_comp = 40;
        strcpy(&mut m.heap[p].variant.str_comp, &SOME_STRING);
        strcpy(&mut m.l.str_1_loc, &STRING_1ST);
        // "Was missing in published program."
        m.g.arr_2_glob[8][7] = 10;
        m
    }

    /// One pass through the body of `main`'s `for (Run_Index = 1; ; ++Run_Index)` loop.
    ///
    /// `Int_1_Loc`, `Int_2_Loc` and `Ch_Index` are plain locals here, as in C where they live in
    /// registers (`Int_1_Loc`'s address only goes to `Proc_2`, which gcc inlines), so the
    /// optimiser may fold what gcc folds (e.g. the `while` loop, which runs once with the known
    /// values 2 and 3). `Int_3_Loc`, `Enum_Loc` and the strings are in memory ([`Locals`]), as
    /// in C where their addresses go to functions in `dhry_2.c`. The three register locals are
    /// stored into [`Locals`] at the end, which keeps the final arithmetic and `Proc_2`
    /// observable (see the module docs).
    #[inline(always)]
    fn one_loop(&mut self, run_index: u64) {
        let Machine { g, heap, l } = self;
        proc_5(g);
        proc_4(g);
        // Ch_1_Glob == 'A', Ch_2_Glob == 'B', Bool_Glob == true
        let mut int_1_loc: i32 = 2;
        let mut int_2_loc: i32 = 3;
        strcpy(&mut l.str_2_loc, &STRING_2ND);
        l.enum_loc = Enumeration::Ident2;
        g.bool_glob = !func_2(g, &l.str_1_loc, &l.str_2_loc);
        // Bool_Glob == 1
        while int_1_loc < int_2_loc {
            // loop body executed once
            l.int_3_loc = 5 * int_1_loc - int_2_loc;
            // Int_3_Loc == 7
            proc_7(int_1_loc, int_2_loc, &mut l.int_3_loc);
            // Int_3_Loc == 7
            int_1_loc += 1;
        }
        // Int_1_Loc == 3, Int_2_Loc == 3, Int_3_Loc == 7
        proc_8(
            &mut g.arr_1_glob,
            &mut g.arr_2_glob,
            int_1_loc,
            l.int_3_loc,
            &mut g.int_glob,
        );
        // Int_Glob == 5
        let ptr_glob = g.ptr_glob;
        proc_1(g, heap, ptr_glob);
        let mut ch_index = b'A';
        while ch_index <= g.ch_2_glob {
            // loop body executed twice
            if l.enum_loc == func_1(g, ch_index, b'C') {
                // then, not executed
                proc_6(g, Enumeration::Ident1, &mut l.enum_loc);
                strcpy(&mut l.str_2_loc, &STRING_3RD);
                // `Int_2_Loc = Run_Index; Int_Glob = Run_Index;` (C converts to int)
                int_2_loc = run_index as i32;
                g.int_glob = run_index as i32;
            }
            ch_index += 1;
        }
        // Int_1_Loc == 3, Int_2_Loc == 3, Int_3_Loc == 7
        int_2_loc *= int_1_loc;
        int_1_loc = int_2_loc / l.int_3_loc;
        int_2_loc = 7 * (int_2_loc - l.int_3_loc) - int_1_loc;
        // Int_1_Loc == 1, Int_2_Loc == 13, Int_3_Loc == 7
        proc_2(g, &mut int_1_loc);
        // Int_1_Loc == 5
        l.int_1_loc = int_1_loc;
        l.int_2_loc = int_2_loc;
        l.ch_index = ch_index;
    }

    fn record_state(&self, p: RecPtr) -> RecordState {
        let rec = &self.heap[p];
        let ptr_comp = if rec.ptr_comp == self.g.ptr_glob {
            RecRef::PtrGlob
        } else if rec.ptr_comp == self.g.next_ptr_glob {
            RecRef::NextPtrGlob
        } else {
            RecRef::Null
        };
        RecordState {
            ptr_comp,
            discr: rec.discr,
            enum_comp: rec.variant.enum_comp,
            int_comp: rec.variant.int_comp,
            str_comp: c_string(&rec.variant.str_comp),
        }
    }

    fn final_state(&self, loops: u64) -> FinalState {
        FinalState {
            loops,
            int_glob: self.g.int_glob,
            bool_glob: self.g.bool_glob,
            ch_1_glob: self.g.ch_1_glob,
            ch_2_glob: self.g.ch_2_glob,
            arr_1_glob_8: self.g.arr_1_glob[8],
            arr_2_glob_8_7: self.g.arr_2_glob[8][7],
            ptr_glob: self.record_state(self.g.ptr_glob),
            next_ptr_glob: self.record_state(self.g.next_ptr_glob),
            int_1_loc: self.l.int_1_loc,
            int_2_loc: self.l.int_2_loc,
            int_3_loc: self.l.int_3_loc,
            ch_index: self.l.ch_index,
            enum_loc: self.l.enum_loc,
            str_1_loc: c_string(&self.l.str_1_loc),
            str_2_loc: c_string(&self.l.str_2_loc),
        }
    }
}

// ------------------------------------------------------------------------------------------
// dhry_1.c: Proc_1 .. Proc_5 (same translation unit as main; left to the inliner)
// ------------------------------------------------------------------------------------------

/// `Proc_1(Ptr_Val_Par)`, executed once per loop with `Ptr_Glob`.
fn proc_1(g: &Globals, heap: &mut [Record; 2], ptr_val_par: RecPtr) {
    let next_record = heap[ptr_val_par].ptr_comp; // == Ptr_Glob_Next
                                                  // structassign(*Ptr_Val_Par->Ptr_Comp, *Ptr_Glob)
    let dst = heap[ptr_val_par].ptr_comp;
    heap[dst] = heap[g.ptr_glob];
    heap[ptr_val_par].variant.int_comp = 5;
    heap[next_record].variant.int_comp = heap[ptr_val_par].variant.int_comp;
    heap[next_record].ptr_comp = heap[ptr_val_par].ptr_comp;
    // Proc_3(&Next_Record->Ptr_Comp)
    proc_3(g, heap, next_record);
    // Ptr_Val_Par->Ptr_Comp->Ptr_Comp == Ptr_Glob->Ptr_Comp
    if heap[next_record].discr == Enumeration::Ident1 {
        // then, executed
        heap[next_record].variant.int_comp = 6;
        let enum_val = heap[ptr_val_par].variant.enum_comp;
        proc_6(g, enum_val, &mut heap[next_record].variant.enum_comp);
        heap[next_record].ptr_comp = heap[g.ptr_glob].ptr_comp;
        let int_val = heap[next_record].variant.int_comp;
        proc_7(int_val, 10, &mut heap[next_record].variant.int_comp);
    } else {
        // not executed: structassign(*Ptr_Val_Par, *Ptr_Val_Par->Ptr_Comp)
        let src = heap[ptr_val_par].ptr_comp;
        heap[ptr_val_par] = heap[src];
    }
}

/// `Proc_2(Int_Par_Ref)`: `*Int_Par_Ref == 1` becomes 4 (the comment in `dhry_1.c`; with
/// `Int_Glob == 5` it becomes 5).
fn proc_2(g: &Globals, int_par_ref: &mut i32) {
    // UnixBench's dhry_1.c initialises Enum_Loc (= 0, Ident_1).
    let mut enum_loc = Enumeration::Ident1;
    let mut int_loc = *int_par_ref + 10;
    loop {
        // executed once
        if g.ch_1_glob == b'A' {
            // then, executed
            int_loc -= 1;
            *int_par_ref = int_loc - g.int_glob;
            enum_loc = Enumeration::Ident1;
        }
        if enum_loc == Enumeration::Ident1 {
            break;
        }
    }
}

/// `Proc_3(Ptr_Ref_Par)`. C passes `&Next_Record->Ptr_Comp`; here `ptr_ref_rec` names the
/// record whose `Ptr_Comp` field is that out-parameter.
fn proc_3(g: &Globals, heap: &mut [Record; 2], ptr_ref_rec: RecPtr) {
    if g.ptr_glob != NULL {
        // then, executed
        heap[ptr_ref_rec].ptr_comp = heap[g.ptr_glob].ptr_comp;
    }
    proc_7(10, g.int_glob, &mut heap[g.ptr_glob].variant.int_comp);
}

/// `Proc_4()`.
fn proc_4(g: &mut Globals) {
    let bool_loc = g.ch_1_glob == b'A';
    g.bool_glob |= bool_loc;
    g.ch_2_glob = b'B';
}

/// `Proc_5()`.
fn proc_5(g: &mut Globals) {
    g.ch_1_glob = b'A';
    g.bool_glob = false;
}

// ------------------------------------------------------------------------------------------
// dhry_2.c: Proc_6 .. Proc_8, Func_1 .. Func_3 (a separate translation unit in C, so the
// entry points called from dhry_1.c are never inlined there)
// ------------------------------------------------------------------------------------------

/// `Proc_6(Enum_Val_Par, Enum_Ref_Par)`.
#[inline(never)]
fn proc_6(g: &Globals, enum_val_par: Enumeration, enum_ref_par: &mut Enumeration) {
    *enum_ref_par = enum_val_par;
    if !func_3(enum_val_par) {
        // then, not executed
        *enum_ref_par = Enumeration::Ident4;
    }
    match enum_val_par {
        Enumeration::Ident1 => *enum_ref_par = Enumeration::Ident1,
        Enumeration::Ident2 => {
            if g.int_glob > 100 {
                *enum_ref_par = Enumeration::Ident1;
            } else {
                *enum_ref_par = Enumeration::Ident4;
            }
        }
        // executed
        Enumeration::Ident3 => *enum_ref_par = Enumeration::Ident2,
        Enumeration::Ident4 => {}
        Enumeration::Ident5 => *enum_ref_par = Enumeration::Ident3,
    }
}

/// `Proc_7(Int_1_Par_Val, Int_2_Par_Val, Int_Par_Ref)`.
#[inline(never)]
fn proc_7(int_1_par_val: i32, int_2_par_val: i32, int_par_ref: &mut i32) {
    let int_loc = int_1_par_val + 2;
    *int_par_ref = int_2_par_val + int_loc;
}

/// `Proc_8(Arr_1_Par_Ref, Arr_2_Par_Ref, Int_1_Par_Val, Int_2_Par_Val)`; `int_glob` is the
/// global `Int_Glob` it writes.
#[inline(never)]
fn proc_8(
    arr_1_par_ref: &mut Arr1,
    arr_2_par_ref: &mut Arr2,
    int_1_par_val: i32,
    int_2_par_val: i32,
    int_glob: &mut i32,
) {
    let int_loc = (int_1_par_val + 5) as usize;
    arr_1_par_ref[int_loc] = int_2_par_val;
    arr_1_par_ref[int_loc + 1] = arr_1_par_ref[int_loc];
    arr_1_par_ref[int_loc + 30] = int_loc as i32;
    // for (Int_Index = Int_Loc; Int_Index <= Int_Loc + 1; ++Int_Index)
    //     Arr_2_Par_Ref[Int_Loc][Int_Index] = Int_Loc;
    for element in &mut arr_2_par_ref[int_loc][int_loc..=int_loc + 1] {
        *element = int_loc as i32;
    }
    arr_2_par_ref[int_loc][int_loc - 1] += 1;
    arr_2_par_ref[int_loc + 20][int_loc] = arr_1_par_ref[int_loc];
    *int_glob = 5;
}

/// `Func_1(Ch_1_Par_Val, Ch_2_Par_Val)` as called from `main` (across the translation unit).
#[inline(never)]
fn func_1(g: &mut Globals, ch_1_par_val: u8, ch_2_par_val: u8) -> Enumeration {
    func_1_body(g, ch_1_par_val, ch_2_par_val)
}

/// The body of `Func_1`, inlined into `Func_2` as gcc does within `dhry_2.c`.
#[inline(always)]
fn func_1_body(g: &mut Globals, ch_1_par_val: u8, ch_2_par_val: u8) -> Enumeration {
    let ch_1_loc = ch_1_par_val;
    let ch_2_loc = ch_1_loc;
    if ch_2_loc != ch_2_par_val {
        // then, executed
        Enumeration::Ident1
    } else {
        // not executed
        g.ch_1_glob = ch_1_loc;
        Enumeration::Ident2
    }
}

/// `Func_2(Str_1_Par_Ref, Str_2_Par_Ref)`.
#[inline(never)]
fn func_2(g: &mut Globals, str_1_par_ref: &Str30, str_2_par_ref: &Str30) -> bool {
    let mut int_loc: i32 = 2;
    // C leaves Ch_Loc uninitialised; the loop below always assigns it.
    let mut ch_loc: u8 = 0;
    while int_loc <= 2 {
        // loop body executed once
        let i = int_loc as usize;
        if func_1_body(g, str_1_par_ref[i], str_2_par_ref[i + 1]) == Enumeration::Ident1 {
            // then, executed
            ch_loc = b'A';
            int_loc += 1;
        }
    }
    if (b'W'..b'Z').contains(&ch_loc) {
        // then, not executed
        int_loc = 7;
    }
    if ch_loc == b'R' {
        // then, not executed
        true
    } else if strcmp(str_1_par_ref, str_2_par_ref) > 0 {
        // then, not executed
        int_loc += 7;
        g.int_glob = int_loc;
        true
    } else {
        // executed
        false
    }
}

/// `Func_3(Enum_Par_Val)`, inlined into `Proc_6` as gcc does within `dhry_2.c`.
#[inline(always)]
fn func_3(enum_par_val: Enumeration) -> bool {
    let enum_loc = enum_par_val;
    enum_loc == Enumeration::Ident3
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::time::Duration;

    fn check(loops: u64) {
        let s = run_loops(loops);
        assert_eq!(s.loops, loops);
        assert_eq!(s.int_glob, 5);
        assert!(s.bool_glob);
        assert_eq!(s.ch_1_glob, b'A');
        assert_eq!(s.ch_2_glob, b'B');
        assert_eq!(s.arr_1_glob_8, 7);
        assert_eq!(i64::from(s.arr_2_glob_8_7), loops as i64 + 10);

        assert_eq!(s.ptr_glob.ptr_comp, RecRef::NextPtrGlob);
        assert_eq!(s.ptr_glob.discr, Enumeration::Ident1);
        assert_eq!(s.ptr_glob.discr as u32, 0);
        assert_eq!(s.ptr_glob.enum_comp as u32, 2);
        assert_eq!(s.ptr_glob.int_comp, 17);
        assert_eq!(s.ptr_glob.str_comp, "DHRYSTONE PROGRAM, SOME STRING");

        // "(implementation-dependent), same as above"
        assert_eq!(s.next_ptr_glob.ptr_comp, s.ptr_glob.ptr_comp);
        assert_eq!(s.next_ptr_glob.discr as u32, 0);
        assert_eq!(s.next_ptr_glob.enum_comp as u32, 1);
        assert_eq!(s.next_ptr_glob.int_comp, 18);
        assert_eq!(s.next_ptr_glob.str_comp, "DHRYSTONE PROGRAM, SOME STRING");

        assert_eq!(s.int_1_loc, 5);
        assert_eq!(s.int_2_loc, 13);
        assert_eq!(s.int_3_loc, 7);
        assert_eq!(s.ch_index, b'C');
        assert_eq!(s.enum_loc, Enumeration::Ident2);
        assert_eq!(s.enum_loc as u32, 1);
        assert_eq!(s.str_1_loc, "DHRYSTONE PROGRAM, 1'ST STRING");
        assert_eq!(s.str_2_loc, "DHRYSTONE PROGRAM, 2'ND STRING");
    }

    #[test]
    fn final_values_match_dhrystone_expectations() {
        for loops in [1, 2, 7, 1000, 50_000] {
            check(loops);
        }
    }

    #[test]
    fn zero_loops_leaves_initial_state() {
        let s = run_loops(0);
        assert_eq!(s.arr_2_glob_8_7, 10);
        assert_eq!(s.ptr_glob.int_comp, 40);
        assert_eq!(s.ptr_glob.enum_comp, Enumeration::Ident3);
        assert_eq!(s.str_1_loc, "DHRYSTONE PROGRAM, 1'ST STRING");
        assert_eq!(s.str_2_loc, "");
    }

    #[test]
    fn string_helpers_follow_c_semantics() {
        assert!(strcmp(&STRING_1ST, &STRING_2ND) < 0);
        assert!(strcmp(&STRING_3RD, &STRING_2ND) > 0);
        assert_eq!(strcmp(&SOME_STRING, &SOME_STRING), 0);
        let mut d = STRING_2ND;
        let mut short = [0u8; 31];
        short[..2].copy_from_slice(b"AB");
        strcpy(&mut d, &short);
        // strcpy stops after the NUL; the rest of the destination is untouched.
        assert_eq!(&d[..3], b"AB\0");
        assert_eq!(d[3], STRING_2ND[3]);
        assert_eq!(c_string(&d), "AB");
    }

    /// The textbook byte-at-a-time `strcmp`, as the oracle for the word-wise one.
    fn strcmp_bytewise(s1: &Str30, s2: &Str30) -> i32 {
        for (&a, &b) in s1.iter().zip(s2.iter()) {
            if a != b || a == 0 {
                return i32::from(a) - i32::from(b);
            }
        }
        0
    }

    #[test]
    fn word_wise_strcmp_matches_byte_wise_strcmp() {
        // A small deterministic generator (64-bit LCG), so no extra dependency is needed.
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) as u32
        };
        for _ in 0..20_000 {
            let mut a = STRING_1ST;
            // A NUL somewhere (or nowhere before the terminator), high bytes, small alphabets.
            for byte in a.iter_mut().take(30) {
                *byte = match next() % 8 {
                    0 => 0,
                    1 => 0x80 | (next() as u8),
                    _ => b'A' + (next() % 3) as u8,
                };
            }
            let mut b = a;
            let flips = next() % 3;
            for _ in 0..flips {
                let i = (next() % 31) as usize;
                b[i] = match next() % 4 {
                    0 => 0,
                    1 => 0xff,
                    _ => b'A' + (next() % 3) as u8,
                };
            }
            let (x, y) = (strcmp(&a, &b), strcmp_bytewise(&a, &b));
            assert_eq!(x.signum(), y.signum(), "{a:?} vs {b:?}");
            assert_eq!(x, y);
            assert_eq!(strcmp(&b, &a), -y);
        }
    }

    #[test]
    fn run_stops_when_flag_is_set() {
        let stop = AtomicBool::new(false);
        let loops = std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(Duration::from_millis(50));
                stop.store(true, Ordering::Relaxed);
            });
            run(&stop)
        });
        assert!(loops > 0);
    }

    #[test]
    fn run_with_flag_already_set_does_nothing() {
        let stop = AtomicBool::new(true);
        assert_eq!(run(&stop), 0);
    }
}
