"""What forge reads from the hosts: their transcripts and rollouts, the native goal's verdict,
the plan's windows as each host reports them, and the adapter a host hands the core."""
