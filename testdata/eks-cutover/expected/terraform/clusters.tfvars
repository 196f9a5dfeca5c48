# The cluster registry: IAM trusts and Pod Identity associations are made per name.
eks_clusters = {
  prod = {
    account = "111122223333"
    region  = "ap-northeast-2"
  }
  stage = {
    account = "444455556666"
    region  = "ap-northeast-2"
  }
}
argocd_managed_clusters = ["stage", "prod"]
