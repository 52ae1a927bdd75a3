!t = !sluice.tensor<[i=4]>
