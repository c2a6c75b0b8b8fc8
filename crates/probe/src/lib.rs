//! Samples a process tree's CPU, memory, threads and scheduling from /proc. (Being written: see issue 5.)
