"""Reference solutions of notebook 10 (see course_utils/solutions/__init__.py)."""


# %% evaluation_loss
def held_out_loss(net, dataset):
    """The mean cross-entropy over every point of `dataset` (batches of (x, y)), with `net` in evaluation mode."""
    net.set_train(False)  # Dropout passes everything through
    total_loss, points = 0.0, 0
    for x, y in dataset.create_tuple_iterator():
        total_loss += float(nn.CrossEntropyLoss(reduction="sum")(net(x), y).asnumpy())
        points += len(y)
    return total_loss / points


answer = held_out_loss
nb10.evaluation_loss.check(answer)


# %% multi_metric
class AccuracyPrecision(Metric):
    def __init__(self, classes):
        super().__init__()
        self.classes = classes
        self.clear()

    def clear(self):
        self.points, self.right = 0, 0
        self.predicted = np.zeros(self.classes)  # how often each class was predicted
        self.right_per_class = np.zeros(self.classes)  # ... and how often that prediction was right

    def update(self, *inputs):  # inputs: logits (batch, classes) and labels (batch,), Tensors
        logits = inputs[0].asnumpy()
        labels = inputs[1].asnumpy()
        predicted = logits.argmax(axis=1)
        self.points += len(labels)
        self.right += int((predicted == labels).sum())
        self.predicted += np.bincount(predicted, minlength=self.classes)
        self.right_per_class += np.bincount(predicted[predicted == labels], minlength=self.classes)

    def eval(self):
        accuracy = self.right / self.points
        precision = self.right_per_class / np.maximum(self.predicted, 1)  # 0 for a class never predicted
        return {"accuracy": accuracy, "precision": precision}


answer = AccuracyPrecision
nb10.multi_metric.check(answer)
