//! The simulated card (feature `sim`): a real `Driver` that behaves as the measured cards did.
//! See DESIGN section 4. (Being built.)
