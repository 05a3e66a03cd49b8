//! The 40-entry table of block sizes that mem_rtns_1 and mem_rtns_2 share (num_fcns.c): four
//! groups of five, 1 3 5 7 9 / 11 33 65 129 1024 / 1025 1023 8192 4096 4095 / 11 33 65 129
//! 1024, then the four groups again.

pub const SIZES: [usize; 40] = [
    1, 3, 5, 7, 9, 11, 33, 65, 129, 1024, 1025, 1023, 8192, 4096, 4095, 11, 33, 65, 129, 1024, 1,
    3, 5, 7, 9, 11, 33, 65, 129, 1024, 1025, 1023, 8192, 4096, 4095, 11, 33, 65, 129, 1024,
];
