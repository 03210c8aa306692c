import sys, torch, numpy as np
from transformers import BertConfig, BertModel
torch.manual_seed(0)
m = BertModel(BertConfig(num_hidden_layers=2, hidden_size=128, num_attention_heads=4, intermediate_size=256)).eval()
ids = torch.randint(0, 1000, (1, 128)); mask = torch.ones(1, 128, dtype=torch.int64); mask[0, 100:] = 0
class W(torch.nn.Module):
    def __init__(s, m): super().__init__(); s.m = m
    def forward(s, i, a): return s.m(input_ids=i, attention_mask=a).last_hidden_state
d = sys.argv[1]
torch.onnx.export(W(m), (ids, mask), d + '/small.onnx', input_names=['input_ids','attention_mask'], output_names=['y'], opset_version=17, dynamo=False)
with torch.no_grad(): np.save(d + '/want.npy', W(m)(ids, mask).numpy())
np.save(d + '/ids.npy', ids.numpy()); np.save(d + '/mask.npy', mask.numpy())
