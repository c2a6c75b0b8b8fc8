//! Scenario files, app lifecycle and the knob matrix behind stampede run. (Being written: see issue 5.)
