"""What the records say: statistics, fitted models, each experiment's finding, figures, the published studies
beside ours, and the report. It reads records only: no driver, no Kafka client, no cluster."""
