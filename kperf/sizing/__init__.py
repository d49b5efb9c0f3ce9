"""What to buy for a target workload: costs fitted on a measured run, the brokers, disk, partitions and load
hosts they ask for, and the same workload through the managed services' published sizing rules beside them."""
