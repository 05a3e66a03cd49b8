//! AIM7 `string_rtns` ("String Manipulations", args "100", factor 100): one job runs 100
//! iterations over a zeroed 1 KiB buffer, with a counter c and t = time():
//!
//! 1. sprintf "%g" of c/1000, then atof and strtod of it; sprintf "%ld" of 1000× the value,
//!    then atol, atoi (which sets c) and strtol;
//! 2. sprintf of a fixed 125-character text (blanks, digits, letter runs, punctuation);
//! 3. the eleven ctype tests on each of the first 1023 bytes, c counting the hits, with
//!    toupper-then-tolower of lower-case and tolower-then-toupper of upper-case letters;
//! 4. strcpy "What is your name?" (18 characters), then strcat it (each followed by a strcmp)
//!    while more than 18 bytes are free (55 appends); again with strncat of 10 characters and
//!    strncmp (99 appends);
//! 5. strncpy the 25 characters of ctime(t) over the start (no NUL), t++;
//! 6. strcoll, strcspn, strpbrk, strrchr('\n'), strspn and strstr, each bumping c on its
//!    condition, and a second counter that bumps c when it passes 100.
//!
//! Every call is the C library's, as AIM's. The ctype tests are glibc's table look-ups, which
//! is what its `<ctype.h>` macros compile to under gcc -O2 (one `__ctype_b_loc` table read per
//! test, toupper/tolower through their tables). The fixed text and the strings searched for in
//! step 6 are not given by the spec: the text here has every character class it names.

use super::{Factor, Fail, Job, TaskCtx};
use libc::{c_char, c_int};

pub const JOB: Job = Job {
    name: "string_rtns",
    args: "100",
    factor: Factor::Fixed(100),
    units: "String Manipulations",
    counters: &["iterations", "appends", "ctype_hits"],
    run,
    ..Job::BASE
};

const SIZE: usize = 1024;
const CATBUF: &std::ffi::CStr = c"What is your name?";
/// The fixed text of step 2 (used as sprintf's format, so it holds no `%`).
const TEXT: &std::ffi::CStr = c" \t 0123456789 abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ !\"#$&'()*+,-./:;<=>?@[\\]^_`{|}~ The quick brown fox ran!\n";

extern "C" {
    fn ctime(t: *const libc::time_t) -> *mut c_char;
}

/// glibc's ctype tables, as its macros read them.
#[cfg(target_env = "gnu")]
mod ctype {
    extern "C" {
        fn __ctype_b_loc() -> *mut *const u16;
        fn __ctype_toupper_loc() -> *mut *const i32;
        fn __ctype_tolower_loc() -> *mut *const i32;
    }
    // glibc's class bits (<ctype.h> `_ISbit` on a little-endian machine).
    const BITS: [u16; 11] = [
        0x0008, // alnum
        0x0400, // alpha
        0x0002, // cntrl
        0x0800, // digit
        0x8000, // graph
        0x0200, // lower
        0x4000, // print
        0x0004, // punct
        0x2000, // space
        0x0100, // upper
        0x1000, // xdigit
    ];
    pub const LOWER: usize = 5;
    pub const UPPER: usize = 9;

    pub struct Tables {
        class: *const u16,
        upper: *const i32,
        lower: *const i32,
    }

    impl Tables {
        /// The tables of this thread's locale (the macros' `__ctype_*_loc` calls, which gcc
        /// hoists out of the loop since they are `const` functions).
        pub fn get() -> Tables {
            // SAFETY: glibc returns valid pointers to its per-thread tables.
            unsafe {
                Tables {
                    class: *__ctype_b_loc(),
                    upper: *__ctype_toupper_loc(),
                    lower: *__ctype_tolower_loc(),
                }
            }
        }
        /// Which of the eleven tests byte `c` passes, as bits 0..10.
        pub fn classes(&self, c: libc::c_char) -> [bool; 11] {
            // SAFETY: the tables are indexed from -128 to 255.
            let v = unsafe { *self.class.offset(isize::from(c)) };
            BITS.map(|b| v & b != 0)
        }
        pub fn to_upper(&self, c: i32) -> i32 {
            // SAFETY: as above; c is a char value.
            unsafe { *self.upper.offset(c as isize) }
        }
        pub fn to_lower(&self, c: i32) -> i32 {
            // SAFETY: as above.
            unsafe { *self.lower.offset(c as isize) }
        }
    }
}

/// Elsewhere, the C library's ctype functions.
#[cfg(not(target_env = "gnu"))]
mod ctype {
    pub const LOWER: usize = 5;
    pub const UPPER: usize = 9;
    pub struct Tables;
    impl Tables {
        pub fn get() -> Tables {
            Tables
        }
        pub fn classes(&self, c: libc::c_char) -> [bool; 11] {
            let c = i32::from(c);
            // SAFETY: ctype functions on a char value.
            unsafe {
                [
                    libc::isalnum(c),
                    libc::isalpha(c),
                    libc::iscntrl(c),
                    libc::isdigit(c),
                    libc::isgraph(c),
                    libc::islower(c),
                    libc::isprint(c),
                    libc::ispunct(c),
                    libc::isspace(c),
                    libc::isupper(c),
                    libc::isxdigit(c),
                ]
                .map(|r| r != 0)
            }
        }
        pub fn to_upper(&self, c: i32) -> i32 {
            // SAFETY: as above.
            unsafe { libc::toupper(c) }
        }
        pub fn to_lower(&self, c: i32) -> i32 {
            // SAFETY: as above.
            unsafe { libc::tolower(c) }
        }
    }
}

/// Step 3: the ctype loop; returns the hits.
fn classify(buf: &mut [c_char; SIZE], t: &ctype::Tables) -> c_int {
    let mut hits = 0;
    for b in buf.iter_mut().take(SIZE - 1) {
        let c = *b;
        let is = t.classes(c);
        hits += is.iter().filter(|&&x| x).count() as c_int;
        if is[ctype::LOWER] {
            *b = t.to_lower(t.to_upper(i32::from(c))) as c_char;
        } else if is[ctype::UPPER] {
            *b = t.to_upper(t.to_lower(i32::from(c))) as c_char;
        }
    }
    hits
}

/// Step 4: appends `CATBUF` (all of it, or `n` characters) while more than 18 bytes are free;
/// returns the appends and the compares that matched.
///
/// # Safety
/// `buf` holds a NUL-terminated string.
unsafe fn fill(buf: &mut [c_char; SIZE], n: Option<usize>) -> (u64, c_int) {
    let (mut appends, mut same) = (0, 0);
    let p = buf.as_mut_ptr();
    libc::strcpy(p, CATBUF.as_ptr());
    while SIZE - libc::strlen(p) > CATBUF.count_bytes() {
        let matched = match n {
            None => {
                libc::strcat(p, CATBUF.as_ptr());
                libc::strcmp(p, CATBUF.as_ptr()) == 0
            }
            Some(n) => {
                libc::strncat(p, CATBUF.as_ptr(), n);
                libc::strncmp(p, CATBUF.as_ptr(), n) == 0
            }
        };
        appends += 1;
        same += c_int::from(matched);
    }
    (appends, same)
}

/// Step 6: the searches; returns how many found what they look for.
///
/// # Safety
/// `buf` holds a NUL-terminated string.
unsafe fn search(buf: &[c_char; SIZE]) -> c_int {
    let p = buf.as_ptr();
    [
        libc::strcoll(p, CATBUF.as_ptr()) > 0,
        libc::strcspn(p, c"jfamsond".as_ptr()) > 0,
        !libc::strpbrk(p, c"0123456789".as_ptr()).is_null(),
        !libc::strrchr(p, c_int::from(b'\n')).is_null(),
        libc::strspn(p, c"abcdefghijklmnopqrstuvwxyz".as_ptr()) == 0,
        !libc::strstr(p, p).is_null(),
    ]
    .iter()
    .map(|&b| c_int::from(b))
    .sum()
}

fn run(ctx: &mut TaskCtx, _dir: usize) -> Result<(), Fail> {
    let iterations: u32 = ctx.arg(0)?;
    let tables = ctype::Tables::get();
    let mut buf = [0 as c_char; SIZE];
    let p = buf.as_mut_ptr();
    let mut c: c_int = 0;
    let mut second = 0;
    // SAFETY: time(NULL).
    let t0 = unsafe { libc::time(std::ptr::null_mut()) };
    for t in (t0..).take(iterations as usize) {
        // SAFETY: every string below fits the 1 KiB buffer and stays NUL-terminated (the
        // strncpy of step 5 overwrites the first 25 bytes of a longer string).
        unsafe {
            libc::sprintf(p, c"%g".as_ptr(), f64::from(c) / 1000.0);
            let _ = libc::atof(p);
            let v = libc::strtod(p, std::ptr::null_mut());
            libc::sprintf(p, c"%ld".as_ptr(), (1000.0 * v) as libc::c_long);
            let _ = libc::atol(p);
            c = libc::atoi(p);
            let _ = libc::strtol(p, std::ptr::null_mut(), 10);
            libc::sprintf(p, TEXT.as_ptr());
        }
        let hits = classify(&mut buf, &tables);
        c += hits;
        // SAFETY: buf holds a string (the text of step 2).
        let (whole, same) = unsafe { fill(&mut buf, None) };
        // SAFETY: as above.
        let (part, same_n) = unsafe { fill(&mut buf, Some(10)) };
        c += same + same_n;
        // SAFETY: ctime's static string is 25 characters plus a NUL.
        unsafe { libc::strncpy(p, ctime(&t), 25) };
        // SAFETY: buf still holds a NUL-terminated string.
        c += unsafe { search(&buf) };
        second += 1;
        if second > 100 {
            second = 0;
            c += 1;
        }
        ctx.counters[0] += 1;
        ctx.counters[1] += whole + part;
        ctx.counters[2] += hits as u64;
    }
    std::hint::black_box(&buf);
    if c < 0 {
        return Err(Fail::wrong("string counter"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fixed_text_is_125_characters_without_a_format_directive() {
        assert_eq!(TEXT.count_bytes(), 125);
        assert!(!TEXT.to_bytes().contains(&b'%'));
        assert_eq!(CATBUF.count_bytes(), 18);
    }

    #[test]
    fn a_job_appends_as_aims_does() {
        let mut ctx = TaskCtx::new(0, Vec::new(), 1, 1);
        ctx.args = "2";
        run(&mut ctx, 0).unwrap();
        assert_eq!(ctx.counters[0], 2);
        assert_eq!(ctx.counters[1], 2 * (55 + 99));
        assert!(ctx.counters[2] > 2 * 125);
    }
}
