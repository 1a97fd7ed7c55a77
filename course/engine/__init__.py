"""The trust boundary: everything between a hidden check and the learner's code.

- `runner`: runs pytest on a check module in this (trusted) process and builds the verdict;
- `sandbox`: starts, limits and ends the learner's process;
- `isolation`: what that process may see and do (an allow-list sandbox; tiers; host folders);
- `launcher`: the sandbox built from user namespaces, run as a stand-alone script;
- `zygote`: a grading worker's learner children forked, each into a sandbox of its own, from
  one process that imported the libraries once;
- `child`: the learner's process itself (untrusted: nothing it says is believed);
- `wire`: plain data, the only thing that crosses between the two;
- `checking`: what checks use to judge evidence (assertions, failures).
"""
