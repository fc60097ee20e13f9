"""Reference solutions of notebook 10 (see course_utils/solutions/__init__.py)."""


# %% classifier
def build_classifier(classes):
    """An MLP for 2-D points with `classes` classes, in a Model that reports accuracy."""
    net = nn.SequentialCell(nn.Dense(2, 32), nn.Tanh(), nn.Dense(32, 32), nn.Tanh(), nn.Dense(32, classes))
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    optimizer = nn.Adam(net.trainable_params(), learning_rate=0.02)
    return Model(net, loss_fn, optimizer, metrics={"accuracy": nn.Accuracy()})


answer = build_classifier
nb10.classifier.check(answer)


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
        logits = self._convert_data(inputs[0])
        labels = self._convert_data(inputs[1])
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
