"""spider-race: the command line that offers every job."""
