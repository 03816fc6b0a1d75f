"""The smallest component: a versioned config, one flag section, leader election when asked."""
