!t = !sluice.tensor<[], f8E4M3FN>
