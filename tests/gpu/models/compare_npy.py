import sys, os, numpy as np
want = np.load(sys.argv[1]).astype(np.float64)
for d in sys.argv[2:]:
    f = sorted(os.listdir(d))[0]; got = np.load(os.path.join(d, f)).astype(np.float64)
    print(d, "rel_l2", np.linalg.norm(got - want) / np.linalg.norm(want))
