"""pmrep(1) and pmplot: metric specs and pmrep.conf(5) files, the value pipeline (rates and
unit scaling over blocks of samples, archive replay vectorised) and the output targets."""
